// The lexer: turns .poly source text into tokens on demand, diagnosing bad characters, over-long
// identifiers and out-of-range integer literals. Its state is a position, so the parser can look ahead.
#pragma once

#include "dsl/Diagnostics.h"
#include "dsl/Token.h"

#include <optional>

namespace polyc::dsl {

// The longest identifier the language accepts.
constexpr size_t kMaxIdentifierLength = 256;

class Lexer {
public:
  Lexer(llvm::StringRef source, DiagnosticEngine &diags) : source_(source), pos_(0), diags_(diags) {}

  // The next token; Eof at the end (and forever after).
  Token next();

  // Saving and restoring the position (for the parser's lookahead). Restoring must not re-report
  // errors, so lookahead runs with diagnostics muted.
  size_t position() const { return pos_; }
  void reset(size_t position) { pos_ = position; }
  void setMuted(bool muted) { muted_ = muted; }

private:
  void error(const char *begin, const char *end, const llvm::Twine &message);
  Token make(TokenKind kind, size_t begin);
  Token lexNumber(size_t begin);
  Token lexIdentifier(size_t begin);
  bool skipTrivia();
  void checkUtf8(size_t begin, size_t end); // comments may hold UTF-8, but only valid UTF-8 // whitespace and comments; false on an unterminated block comment

  llvm::StringRef source_;
  size_t pos_;
  DiagnosticEngine &diags_;
  bool muted_ = false;
};

// The value of an integer literal's digits, or nullopt if it does not fit in int64_t.
std::optional<int64_t> parseIntLiteral(llvm::StringRef digits);
// The value of a float literal as the lexer accepts it (digits, '.', exponent), independent of the
// C locale and without exceptions; nullopt if it is not finite.
std::optional<double> parseFloatLiteral(llvm::StringRef text);

} // namespace polyc::dsl
