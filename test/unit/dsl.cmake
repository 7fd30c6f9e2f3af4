# The front end's unit tests: lexer, parser and Sema pieces (tokens, locations, numbers, precedence,
# reduction bodies, resolved members, expressions printed back as source).
polyc_add_unittest(LexerTests SOURCES LexerTests.cpp LIBS polyc_dsl)
polyc_add_unittest(ParserTests SOURCES ParserTests.cpp LIBS polyc_dsl)
polyc_add_unittest(SemaTests SOURCES SemaTests.cpp LIBS polyc_dsl)
polyc_add_unittest(UnparseTests SOURCES UnparseTests.cpp LIBS polyc_dsl)
