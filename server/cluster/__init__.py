"""The cluster layer: how the server processes of one Kropki site (its members) find each other and
share what one process alone cannot hold. It is the only code that talks to Redis, as `server/store` is
the only code with SQL, and the rest of the server must keep serving when Redis is gone; see
docs/cluster.md."""
