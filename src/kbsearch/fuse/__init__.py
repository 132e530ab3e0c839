"""Fusion of the routes' lists: reciprocal rank fusion, convex score fusion, the learned fusion
(its features and tree ensemble), and the method parser."""
