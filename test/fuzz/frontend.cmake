# The front end's fuzzer: lexer, parser, Sema and the AST dump on arbitrary bytes (scripts/fuzz-frontend.sh).
polyc_add_fuzzer(FrontendFuzzer SOURCES FrontendFuzzer.cpp LIBS polyc_dsl)
