"""Pure decisions about one turn: its tool outputs, the rules in a message, its grade."""
