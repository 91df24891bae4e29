"""Acting while the user is away: policies that judge a rental idle, stalled, finished, over its
runtime or budget; an action ladder that notifies, runs the release checklist unattended and
releases only on a passed, fresh checklist; provider commands; sleep and unreachable hosts."""
