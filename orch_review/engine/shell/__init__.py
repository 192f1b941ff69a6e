"""The shell boundary: where agents' commands run, the sandbox layers around them, and the
read-only tools agents get without a shell. Imports no other room of the engine."""
