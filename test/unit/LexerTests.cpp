// Unit tests of the lexer (dsl/Lexer.h): token kinds, locations, numbers, comments and lexical errors.
#include "dsl/Lexer.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <clocale>

using namespace polyc::dsl;

namespace {

struct Lexed {
  llvm::SourceMgr sm;
  std::string diagnostics;
  std::vector<Token> tokens;
  unsigned errors = 0;
};

std::unique_ptr<Lexed> lex(llvm::StringRef source) {
  auto out = std::make_unique<Lexed>();
  unsigned id = out->sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "t.poly"), llvm::SMLoc());
  llvm::raw_string_ostream os(out->diagnostics);
  DiagnosticEngine diags(out->sm, os);
  Lexer lexer(out->sm.getMemoryBuffer(id)->getBuffer(), diags);
  for (;;) {
    Token tok = lexer.next();
    if (tok.is(TokenKind::Eof))
      break;
    out->tokens.push_back(tok);
  }
  out->errors = diags.errorCount();
  return out;
}

std::vector<TokenKind> kinds(const Lexed &l) {
  std::vector<TokenKind> k;
  for (const Token &t : l.tokens)
    k.push_back(t.kind);
  return k;
}

TEST(Lexer, KeywordsAndIdentifiers) {
  auto l = lex("param paramX _x1 sum max min select where in repeat zero clamp mirror i32 f64");
  EXPECT_EQ(l->errors, 0u);
  std::vector<TokenKind> expected = {
      TokenKind::KwParam, TokenKind::Identifier, TokenKind::Identifier, TokenKind::KwSum,
      TokenKind::KwMax,   TokenKind::KwMin,      TokenKind::KwSelect,   TokenKind::KwWhere,
      TokenKind::KwIn,    TokenKind::KwRepeat,   TokenKind::KwZero,     TokenKind::KwClamp,
      TokenKind::KwMirror, TokenKind::KwI32,     TokenKind::KwF64};
  EXPECT_EQ(kinds(*l), expected);
  EXPECT_EQ(l->tokens[1].text, "paramX");
  EXPECT_EQ(l->tokens[2].text, "_x1");
}

TEST(Lexer, Punctuation) {
  auto l = lex("[](){},;= += -= + - * / % < <= > >= == != && || ! ..");
  EXPECT_EQ(l->errors, 0u);
  std::vector<TokenKind> expected = {
      TokenKind::LBracket, TokenKind::RBracket, TokenKind::LParen,  TokenKind::RParen,    TokenKind::LBrace,
      TokenKind::RBrace,   TokenKind::Comma,    TokenKind::Semi,    TokenKind::Assign,    TokenKind::PlusAssign,
      TokenKind::MinusAssign, TokenKind::Plus,  TokenKind::Minus,   TokenKind::Star,      TokenKind::Slash,
      TokenKind::Percent,  TokenKind::Less,     TokenKind::LessEq,  TokenKind::Greater,   TokenKind::GreaterEq,
      TokenKind::EqEq,     TokenKind::NotEq,    TokenKind::AndAnd,  TokenKind::OrOr,      TokenKind::Bang,
      TokenKind::DotDot};
  EXPECT_EQ(kinds(*l), expected);
}

TEST(Lexer, RangeAfterInteger) {
  // "0..N" is an integer, '..' and a name, not the float "0." followed by ".N".
  auto l = lex("0..N 2. 1..2");
  EXPECT_EQ(l->errors, 0u);
  std::vector<TokenKind> expected = {TokenKind::IntLit, TokenKind::DotDot,   TokenKind::Identifier,
                                     TokenKind::FloatLit, TokenKind::IntLit, TokenKind::DotDot,
                                     TokenKind::IntLit};
  EXPECT_EQ(kinds(*l), expected);
  EXPECT_EQ(l->tokens[3].text, "2.");
}

TEST(Lexer, Numbers) {
  auto l = lex("0 42 9223372036854775807 1.0 0.5 2. 1e-3 3.5E+2 25e1");
  ASSERT_EQ(l->errors, 0u);
  ASSERT_EQ(l->tokens.size(), 9u);
  EXPECT_EQ(parseIntLiteral(l->tokens[2].text), INT64_MAX);
  for (size_t i = 3; i < 9; ++i)
    EXPECT_EQ(l->tokens[i].kind, TokenKind::FloatLit) << i;
  EXPECT_EQ(parseFloatLiteral("1e-3"), 1e-3);
  EXPECT_EQ(parseFloatLiteral("3.5E+2"), 350.0);
  EXPECT_EQ(parseFloatLiteral("2."), 2.0);
  EXPECT_EQ(parseFloatLiteral("25e1"), 250.0);
  EXPECT_EQ(parseIntLiteral("9223372036854775808"), std::nullopt);
  EXPECT_EQ(parseIntLiteral(""), std::nullopt);
  EXPECT_EQ(parseFloatLiteral("1e999"), std::nullopt);
}

TEST(Lexer, FloatParsingIgnoresLocale) {
  // A locale with a decimal comma must not change how "0.5" is read.
  const char *old = std::setlocale(LC_NUMERIC, nullptr);
  std::string saved = old ? old : "C";
  if (!std::setlocale(LC_NUMERIC, "de_DE.UTF-8") && !std::setlocale(LC_NUMERIC, "fr_FR.UTF-8"))
    GTEST_SKIP() << "no locale with a decimal comma installed";
  EXPECT_EQ(parseFloatLiteral("0.5"), 0.5);
  std::setlocale(LC_NUMERIC, saved.c_str());
}

TEST(Lexer, NumberErrors) {
  auto l = lex("99999999999999999999 12abc 1e");
  EXPECT_EQ(l->errors, 3u);
  EXPECT_NE(l->diagnostics.find("1:1: error: integer literal is too large"), std::string::npos);
  EXPECT_NE(l->diagnostics.find("1:22: error: invalid number literal"), std::string::npos);
  EXPECT_NE(l->diagnostics.find("1:28: error: invalid number literal"), std::string::npos);
  for (const Token &t : l->tokens)
    EXPECT_EQ(t.kind, TokenKind::Error);
}

TEST(Lexer, Locations) {
  auto l = lex("param N;\n  output f32 y[N]; // c\n/* x\n y */ y");
  ASSERT_EQ(l->errors, 0u);
  auto lineCol = [&](const Token &t) { return l->sm.getLineAndColumn(t.loc()); };
  EXPECT_EQ(lineCol(l->tokens[0]), std::make_pair(1u, 1u));
  EXPECT_EQ(lineCol(l->tokens[1]), std::make_pair(1u, 7u));
  EXPECT_EQ(lineCol(l->tokens[3]), std::make_pair(2u, 3u)); // output
  EXPECT_EQ(l->tokens.back().text, "y");
  EXPECT_EQ(lineCol(l->tokens.back()), std::make_pair(4u, 7u));
  EXPECT_EQ(l->tokens[3].range().End.getPointer() - l->tokens[3].range().Start.getPointer(), 6);
}

TEST(Lexer, Comments) {
  auto l = lex("a // b c\n/* d \n e */ f /* g */");
  EXPECT_EQ(l->errors, 0u);
  ASSERT_EQ(l->tokens.size(), 2u);
  EXPECT_EQ(l->tokens[1].text, "f");
  auto u = lex("a /* never closed");
  EXPECT_EQ(u->errors, 1u);
  EXPECT_NE(u->diagnostics.find("1:3: error: unterminated block comment"), std::string::npos);
  // Block comments do not nest: the first */ ends it.
  auto n = lex("/* /* */ x */");
  EXPECT_EQ(n->tokens.size(), 3u); // x * /
}

TEST(Lexer, IdentifierLength) {
  auto ok = lex(std::string(256, 'a'));
  EXPECT_EQ(ok->errors, 0u);
  ASSERT_EQ(ok->tokens.size(), 1u);
  EXPECT_EQ(ok->tokens[0].kind, TokenKind::Identifier);
  auto bad = lex(std::string(257, 'a') + " b");
  EXPECT_EQ(bad->errors, 1u);
  ASSERT_EQ(bad->tokens.size(), 2u);
  EXPECT_EQ(bad->tokens[0].kind, TokenKind::Error);
  EXPECT_EQ(bad->tokens[1].text, "b");
}

TEST(Lexer, BadBytes) {
  // One error per run of bad bytes, and lexing goes on after it.
  auto l = lex(llvm::StringRef("a \0\0\0 b \xff\xfe c @ d", 16));
  EXPECT_EQ(l->errors, 3u);
  EXPECT_NE(l->diagnostics.find("error: NUL byte in source"), std::string::npos);
  EXPECT_NE(l->diagnostics.find("error: non-ASCII byte in source"), std::string::npos);
  EXPECT_NE(l->diagnostics.find("error: unexpected character '@'"), std::string::npos);
  std::vector<std::string> names;
  for (const Token &t : l->tokens)
    if (t.is(TokenKind::Identifier))
      names.push_back(t.text.str());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d"}));
  // UTF-8 is fine in comments, invalid UTF-8 is not.
  EXPECT_EQ(lex("// caf\xc3\xa9\nx")->errors, 0u);
  EXPECT_EQ(lex("// caf\xc3\nx")->errors, 1u);
}

TEST(Lexer, EofIsSticky) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy("x", "t.poly"), llvm::SMLoc());
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sm, os);
  Lexer lexer(sm.getMemoryBuffer(id)->getBuffer(), diags);
  EXPECT_EQ(lexer.next().kind, TokenKind::Identifier);
  EXPECT_EQ(lexer.next().kind, TokenKind::Eof);
  EXPECT_EQ(lexer.next().kind, TokenKind::Eof);
}

} // namespace
