// The restoration model is built in the next commits.
import StateJournal
