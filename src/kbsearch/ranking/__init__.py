"""What one pipeline run is made of: the stage protocols, the run a judging stage reads,
and the trace explanations read."""
