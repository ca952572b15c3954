"""Records, revisions and the rules that govern them. No gRPC or SQL here."""
