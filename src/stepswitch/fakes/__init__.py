"""Stand-ins for providers: the loopback HTTP server and the scripted provider."""
