//! Multi-turn context: follow-ups that inherit the previous turn's contract (confirmations, "nothing changed, try again").
