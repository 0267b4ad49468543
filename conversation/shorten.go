package conversation

// ActionFullText shows an artifact's whole text to the person who clicked, ephemerally
// in the thread: the "Show full text" button of a card that shortens it.
const ActionFullText ActionName = "full_text"
