//! The driver: source file → checked AST → core IR, shared by every subcommand.
