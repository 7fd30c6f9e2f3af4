// The lexer: .poly source text -> tokens. Rejects what the language reference forbids (bytes outside
// printable ASCII, NUL bytes, identifiers over 256 characters, integers beyond int64) with one
// diagnostic per offending run, so binary input gives a few errors rather than one per byte.
#include "dsl/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"

#include <charconv>
#include <cmath>

using namespace llvm;
using namespace polyc::dsl;

const char *polyc::dsl::spelling(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "invalid token";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::IntLit: return "integer literal";
  case TokenKind::FloatLit: return "float literal";
  case TokenKind::KwParam: return "'param'";
  case TokenKind::KwConst: return "'const'";
  case TokenKind::KwBoundary: return "'boundary'";
  case TokenKind::KwFunc: return "'func'";
  case TokenKind::KwInput: return "'input'";
  case TokenKind::KwOutput: return "'output'";
  case TokenKind::KwInOut: return "'inout'";
  case TokenKind::KwF32: return "'f32'";
  case TokenKind::KwF64: return "'f64'";
  case TokenKind::KwI32: return "'i32'";
  case TokenKind::KwRepeat: return "'repeat'";
  case TokenKind::KwIn: return "'in'";
  case TokenKind::KwWhere: return "'where'";
  case TokenKind::KwSum: return "'sum'";
  case TokenKind::KwMax: return "'max'";
  case TokenKind::KwMin: return "'min'";
  case TokenKind::KwSelect: return "'select'";
  case TokenKind::KwZero: return "'zero'";
  case TokenKind::KwClamp: return "'clamp'";
  case TokenKind::KwMirror: return "'mirror'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::Comma: return "','";
  case TokenKind::Semi: return "';'";
  case TokenKind::Assign: return "'='";
  case TokenKind::PlusAssign: return "'+='";
  case TokenKind::MinusAssign: return "'-='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEq: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEq: return "'>='";
  case TokenKind::EqEq: return "'=='";
  case TokenKind::NotEq: return "'!='";
  case TokenKind::AndAnd: return "'&&'";
  case TokenKind::OrOr: return "'||'";
  case TokenKind::Bang: return "'!'";
  case TokenKind::DotDot: return "'..'";
  }
  return "token";
}

std::optional<int64_t> polyc::dsl::parseIntLiteral(StringRef digits) {
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return std::nullopt;
    if (value > (INT64_MAX - (c - '0')) / 10)
      return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return digits.empty() ? std::nullopt : std::optional<int64_t>(value);
}

std::optional<double> polyc::dsl::parseFloatLiteral(StringRef text) {
  double value = 0;
  // std::from_chars is locale-independent and reports errors by value, never by exception.
  auto [end, ec] = std::from_chars(text.begin(), text.end(), value, std::chars_format::general);
  if (ec != std::errc() || end != text.end() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

static bool isIdentStart(char c) { return isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return isAlnum(c) || c == '_'; }
static bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
// Bytes the language accepts outside comments besides those that start a token.
static bool isPrintableAscii(char c) { return c >= 0x20 && c < 0x7f; }

void Lexer::error(const char *begin, const char *end, const Twine &message) {
  if (!muted_)
    diags_.error(SMRange(SMLoc::getFromPointer(begin), SMLoc::getFromPointer(end)), message);
}

Token Lexer::make(TokenKind kind, size_t begin) {
  Token tok;
  tok.kind = kind;
  tok.text = source_.slice(begin, pos_);
  return tok;
}

void Lexer::checkUtf8(size_t begin, size_t end) {
  const auto *first = reinterpret_cast<const UTF8 *>(source_.data() + begin);
  const auto *last = reinterpret_cast<const UTF8 *>(source_.data() + end);
  const UTF8 *cursor = first;
  if (!isLegalUTF8String(&cursor, last)) {
    const char *bad = reinterpret_cast<const char *>(cursor);
    error(bad, bad + 1, "invalid UTF-8 in comment");
  }
}

bool Lexer::skipTrivia() {
  while (pos_ < source_.size()) {
    char c = source_[pos_];
    if (isBlank(c)) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < source_.size() && source_[pos_ + 1] == '/') {
      size_t nl = source_.find('\n', pos_);
      size_t end = nl == StringRef::npos ? source_.size() : nl + 1;
      checkUtf8(pos_, end);
      pos_ = end;
    } else if (c == '/' && pos_ + 1 < source_.size() && source_[pos_ + 1] == '*') {
      size_t close = source_.find("*/", pos_ + 2);
      if (close == StringRef::npos) {
        error(source_.data() + pos_, source_.data() + pos_ + 2, "unterminated block comment");
        pos_ = source_.size();
        return false;
      }
      checkUtf8(pos_, close + 2);
      pos_ = close + 2;
    } else {
      break;
    }
  }
  return true;
}

Token Lexer::lexNumber(size_t begin) {
  bool isFloat = false;
  while (pos_ < source_.size() && isDigit(source_[pos_]))
    ++pos_;
  // "2." is a float, but "0..N" is an integer followed by '..'.
  if (pos_ < source_.size() && source_[pos_] == '.' &&
      !(pos_ + 1 < source_.size() && source_[pos_ + 1] == '.')) {
    isFloat = true;
    ++pos_;
    while (pos_ < source_.size() && isDigit(source_[pos_]))
      ++pos_;
  }
  if (pos_ < source_.size() && (source_[pos_] == 'e' || source_[pos_] == 'E')) {
    size_t exp = pos_ + 1;
    if (exp < source_.size() && (source_[exp] == '+' || source_[exp] == '-'))
      ++exp;
    if (exp < source_.size() && isDigit(source_[exp])) {
      isFloat = true;
      pos_ = exp;
      while (pos_ < source_.size() && isDigit(source_[pos_]))
        ++pos_;
    }
  }
  if (pos_ < source_.size() && isIdentChar(source_[pos_])) {
    while (pos_ < source_.size() && isIdentChar(source_[pos_]))
      ++pos_;
    error(source_.data() + begin, source_.data() + pos_, "invalid number literal");
    return make(TokenKind::Error, begin);
  }
  Token tok = make(isFloat ? TokenKind::FloatLit : TokenKind::IntLit, begin);
  if (isFloat ? !parseFloatLiteral(tok.text) : !parseIntLiteral(tok.text)) {
    if (isFloat)
      error(tok.text.begin(), tok.text.end(), "float literal is out of range");
    else
      error(tok.text.begin(), tok.text.end(), "integer literal is too large for a 64-bit signed integer");
    tok.kind = TokenKind::Error;
  }
  return tok;
}

Token Lexer::lexIdentifier(size_t begin) {
  while (pos_ < source_.size() && isIdentChar(source_[pos_]))
    ++pos_;
  Token tok = make(TokenKind::Identifier, begin);
  if (tok.text.size() > kMaxIdentifierLength) {
    error(tok.text.begin(), tok.text.begin() + 1,
          "identifier is longer than " + Twine(kMaxIdentifierLength) + " characters (" +
              Twine(tok.text.size()) + ")");
    tok.kind = TokenKind::Error;
    return tok;
  }
  tok.kind = StringSwitch<TokenKind>(tok.text)
                 .Case("param", TokenKind::KwParam)
                 .Case("const", TokenKind::KwConst)
                 .Case("boundary", TokenKind::KwBoundary)
                 .Case("func", TokenKind::KwFunc)
                 .Case("input", TokenKind::KwInput)
                 .Case("output", TokenKind::KwOutput)
                 .Case("inout", TokenKind::KwInOut)
                 .Case("f32", TokenKind::KwF32)
                 .Case("f64", TokenKind::KwF64)
                 .Case("i32", TokenKind::KwI32)
                 .Case("repeat", TokenKind::KwRepeat)
                 .Case("in", TokenKind::KwIn)
                 .Case("where", TokenKind::KwWhere)
                 .Case("sum", TokenKind::KwSum)
                 .Case("max", TokenKind::KwMax)
                 .Case("min", TokenKind::KwMin)
                 .Case("select", TokenKind::KwSelect)
                 .Case("zero", TokenKind::KwZero)
                 .Case("clamp", TokenKind::KwClamp)
                 .Case("mirror", TokenKind::KwMirror)
                 .Default(TokenKind::Identifier);
  return tok;
}

Token Lexer::next() {
  if (!skipTrivia() || pos_ >= source_.size()) {
    Token eof;
    eof.text = source_.substr(source_.size());
    return eof;
  }
  size_t begin = pos_;
  char c = source_[pos_];
  if (isDigit(c))
    return lexNumber(begin);
  if (isIdentStart(c))
    return lexIdentifier(begin);

  auto at = [&](size_t i) { return pos_ + i < source_.size() ? source_[pos_ + i] : '\0'; };
  auto one = [&](TokenKind kind) { ++pos_; return make(kind, begin); };
  auto two = [&](TokenKind kind) { pos_ += 2; return make(kind, begin); };
  switch (c) {
  case '[': return one(TokenKind::LBracket);
  case ']': return one(TokenKind::RBracket);
  case '(': return one(TokenKind::LParen);
  case ')': return one(TokenKind::RParen);
  case '{': return one(TokenKind::LBrace);
  case '}': return one(TokenKind::RBrace);
  case ',': return one(TokenKind::Comma);
  case ';': return one(TokenKind::Semi);
  case '*': return one(TokenKind::Star);
  case '/': return one(TokenKind::Slash);
  case '%': return one(TokenKind::Percent);
  case '=': return at(1) == '=' ? two(TokenKind::EqEq) : one(TokenKind::Assign);
  case '+': return at(1) == '=' ? two(TokenKind::PlusAssign) : one(TokenKind::Plus);
  case '-': return at(1) == '=' ? two(TokenKind::MinusAssign) : one(TokenKind::Minus);
  case '<': return at(1) == '=' ? two(TokenKind::LessEq) : one(TokenKind::Less);
  case '>': return at(1) == '=' ? two(TokenKind::GreaterEq) : one(TokenKind::Greater);
  case '!': return at(1) == '=' ? two(TokenKind::NotEq) : one(TokenKind::Bang);
  case '&':
    if (at(1) == '&')
      return two(TokenKind::AndAnd);
    break;
  case '|':
    if (at(1) == '|')
      return two(TokenKind::OrOr);
    break;
  case '.':
    if (at(1) == '.')
      return two(TokenKind::DotDot);
    break;
  default:
    break;
  }

  // Not a token. A printable character is reported by name; a run of bytes outside printable ASCII
  // (binary data, UTF-8 text, NUL) is reported once.
  if (isPrintableAscii(c)) {
    ++pos_;
    error(source_.data() + begin, source_.data() + pos_, Twine("unexpected character '") + Twine(c) + "'");
    return make(TokenKind::Error, begin);
  }
  while (pos_ < source_.size() && !isPrintableAscii(source_[pos_]) && !isBlank(source_[pos_]))
    ++pos_;
  if (c == '\0')
    error(source_.data() + begin, source_.data() + pos_, "NUL byte in source");
  else if (static_cast<unsigned char>(c) >= 0x80)
    error(source_.data() + begin, source_.data() + pos_,
          "non-ASCII byte in source (only comments may hold UTF-8 text)");
  else
    error(source_.data() + begin, source_.data() + pos_, "control character in source");
  return make(TokenKind::Error, begin);
}
