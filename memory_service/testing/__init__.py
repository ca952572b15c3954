"""Stand-ins for the ports, for tests of the rules that need no database."""
