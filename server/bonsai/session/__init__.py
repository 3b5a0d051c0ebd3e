"""bonsai.session: what a session does between the agent and the wire (turns, views, services)."""
