// Tokens of the .poly language: what the lexer (Lexer.cpp) produces and the parser (Parser.cpp) consumes.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace polyc::dsl {

enum class TokenKind {
  Eof,
  Error, // a lexical error, already diagnosed
  Identifier,
  IntLit,
  FloatLit,
  // Keywords.
  KwParam, KwConst, KwBoundary, KwFunc, KwInput, KwOutput, KwInOut, KwF32, KwF64, KwI32, KwRepeat,
  KwIn, KwWhere, KwSum, KwMax, KwMin, KwSelect, KwZero, KwClamp, KwMirror,
  // Punctuation.
  LBracket, RBracket, LParen, RParen, LBrace, RBrace, Comma, Semi,
  Assign, PlusAssign, MinusAssign,
  Plus, Minus, Star, Slash, Percent,
  Less, LessEq, Greater, GreaterEq, EqEq, NotEq,
  AndAnd, OrOr, Bang, DotDot,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text; // points into the source buffer
  bool is(TokenKind k) const { return kind == k; }
  bool isKeyword() const { return kind >= TokenKind::KwParam && kind <= TokenKind::KwMirror; }
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  llvm::SMLoc endLoc() const { return llvm::SMLoc::getFromPointer(text.data() + text.size()); }
  llvm::SMRange range() const { return {loc(), endLoc()}; }
};

// How a token kind is written in the source, for messages ("expected ';'").
const char *spelling(TokenKind kind);

} // namespace polyc::dsl
