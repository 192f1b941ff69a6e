"""The Messages API: the client, the endpoints and providers it talks to, and the scheduling
and budget every request passes."""
