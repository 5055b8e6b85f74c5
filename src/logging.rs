//! Logging to a file (tracing-appender), never to the screen.
