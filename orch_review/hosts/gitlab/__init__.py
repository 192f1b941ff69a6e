"""GitLab merge requests: the job's variables, the REST API, positions on the diff, and
the discussions and summary note orch-review keeps on a merge request."""
