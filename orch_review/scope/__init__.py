"""What is reviewed: git, the scope, ignore rules, reviewable files, diffs, the snapshot."""
