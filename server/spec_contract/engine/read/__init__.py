"""Stage 1, files: which files a tree has, which project a path belongs to, and what each path reads as."""
