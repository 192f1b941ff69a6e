"""Code hosts: one interface, and an adapter per host (GitHub, GitLab)."""
