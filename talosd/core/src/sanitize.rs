//! Sanitising proposed content before approval: trailing commentary and stray fences stripped, so the approved bytes are the written bytes.
