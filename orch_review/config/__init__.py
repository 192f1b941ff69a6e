"""Configuration: the settings record, where it is read from, and what it chooses from."""
