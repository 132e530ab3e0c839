from kbsearch.cli import main

main()
