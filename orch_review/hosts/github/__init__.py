"""Pull request reviews on GitHub: read the Actions event, post inline comments and one
summary comment, fall back to annotations and the job summary when the token cannot write.

``event`` reads the environment GitHub Actions sets, ``api`` is the REST client, ``comments``
decides what goes inline, ``summary`` writes the markdown, ``publish`` posts it, ``fetch``
completes a shallow checkout, ``outputs`` writes step outputs, and ``run`` ties them together
for the ``orch-review github`` command.
"""
