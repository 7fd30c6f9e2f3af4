// The parser: .poly tokens -> AST, by recursive descent over docs/language.md's grammar. Errors recover
// at the next ';' (or '}' in a repeat block). Expression depth is bounded both in the parser's own
// recursion and in the height of the trees it builds ("1+1+...+1" is shallow to parse but deep as a tree).
#include "dsl/Parser.h"

#include "dsl/Lexer.h"

#include "llvm/ADT/DenseMap.h"

using namespace llvm;
using namespace polyc;
using namespace polyc::ast;
using namespace polyc::dsl;

namespace {

class Parser {
public:
  Parser(SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diags)
      : lexer_(sm.getMemoryBuffer(bufferId)->getBuffer(), diags), diags_(diags) {
    program_ = std::make_unique<Program>();
    program_->fileName = sm.getMemoryBuffer(bufferId)->getBufferIdentifier().str();
    prevEnd_ = SMLoc::getFromPointer(sm.getMemoryBuffer(bufferId)->getBufferStart());
    tok_ = lexer_.next();
  }

  std::unique_ptr<Program> run();

private:
  // Token handling.
  void advance() {
    prevEnd_ = tok_.endLoc();
    tok_ = lexer_.next();
  }
  bool consume(TokenKind kind) {
    if (!tok_.is(kind))
      return false;
    advance();
    return true;
  }
  bool expect(TokenKind kind, const char *context);
  bool errorHere(const Twine &message);
  SMRange rangeFrom(SMLoc start) const { return {start, prevEnd_}; }
  void skipToStatementEnd(bool inBlock);

  // Items.
  bool parseItem();
  bool parseParamDecl();
  bool parseConstDecl();
  bool parseBoundaryDecl();
  bool parseFuncDecl();
  bool parseArrayDecl();
  std::unique_ptr<Equation> parseEquation();
  bool parseRepeat();
  bool parseUntil(RepeatBlock &block);
  std::optional<Boundary> parseBoundaryKind();
  bool parseIdentifier(std::string &name, SMRange &range, const char *what);

  // Expressions; each returns null after reporting an error.
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseCmp();
  ExprPtr parseAdd();
  ExprPtr parseMul();
  ExprPtr parseUnary();
  ExprPtr parseReduction(ReductionOp op);
  bool parseBindings(std::vector<RangeBinding> &bindings, unsigned &height, const char *what);
  ExprPtr parsePrimary();
  ExprPtr finishSample(std::vector<ExprPtr> args, llvm::SMLoc start, unsigned height);
  bool parseExprList(std::vector<ExprPtr> &out, TokenKind close, const char *context);
  bool parseRange(ExprPtr &lo, ExprPtr &hi);
  bool looksLikeReduction();

  // Depth accounting.
  unsigned heightOf(const Expr *e) const { return e ? heights_.lookup(e) : 0; }
  unsigned heightOf(const std::vector<ExprPtr> &list) const;
  ExprPtr finish(ExprPtr e, unsigned childHeight);
  bool tooDeep(SMRange at);
  struct DepthGuard {
    Parser &p;
    explicit DepthGuard(Parser &p) : p(p) { ++p.depth_; }
    ~DepthGuard() { --p.depth_; }
  };

  Lexer lexer_;
  DiagnosticEngine &diags_;
  std::unique_ptr<Program> program_;
  Token tok_;
  SMLoc prevEnd_;
  unsigned depth_ = 0;
  bool depthReported_ = false; // one depth error per statement
  DenseMap<const Expr *, unsigned> heights_;
};

} // namespace

bool Parser::errorHere(const Twine &message) {
  // The lexer has already reported an invalid token.
  if (tok_.is(TokenKind::Error))
    return false;
  return diags_.error(tok_.range(), message);
}

bool Parser::expect(TokenKind kind, const char *context) {
  if (consume(kind))
    return true;
  return errorHere(Twine("expected ") + spelling(kind) + " " + context + ", found " +
                   (tok_.is(TokenKind::Identifier) ? Twine("'") + tok_.text + "'" : Twine(spelling(tok_.kind))));
}

void Parser::skipToStatementEnd(bool inBlock) {
  while (!tok_.is(TokenKind::Eof)) {
    if (tok_.is(TokenKind::Semi)) {
      advance();
      return;
    }
    if (inBlock && tok_.is(TokenKind::RBrace))
      return;
    advance();
  }
}

bool Parser::tooDeep(SMRange at) {
  if (!depthReported_)
    diags_.error(at, "expression is nested too deeply (the limit is " + Twine(kMaxNestingDepth) + " levels)");
  depthReported_ = true;
  return false;
}

unsigned Parser::heightOf(const std::vector<ExprPtr> &list) const {
  unsigned h = 0;
  for (const ExprPtr &e : list)
    h = std::max(h, heightOf(e.get()));
  return h;
}

// Records the height of a new node (one more than its tallest child) and rejects it past the limit.
ExprPtr Parser::finish(ExprPtr e, unsigned childHeight) {
  if (childHeight + 1 > kMaxNestingDepth) {
    tooDeep(e->range);
    return nullptr;
  }
  heights_[e.get()] = childHeight + 1;
  return e;
}

std::unique_ptr<Program> Parser::run() {
  while (!tok_.is(TokenKind::Eof) && !diags_.tooMany()) {
    depthReported_ = false;
    heights_.clear();
    if (!parseItem())
      skipToStatementEnd(false);
  }
  return std::move(program_);
}

bool Parser::parseIdentifier(std::string &name, SMRange &range, const char *what) {
  if (tok_.is(TokenKind::Identifier)) {
    name = tok_.text.str();
    range = tok_.range();
    advance();
    return true;
  }
  if (tok_.isKeyword())
    return errorHere(Twine("'") + tok_.text + "' is a keyword and cannot be used as " + what);
  return errorHere(Twine("expected ") + what + ", found " + spelling(tok_.kind));
}

bool Parser::parseItem() {
  switch (tok_.kind) {
  case TokenKind::KwParam: return parseParamDecl();
  case TokenKind::KwConst: return parseConstDecl();
  case TokenKind::KwBoundary: return parseBoundaryDecl();
  case TokenKind::KwFunc: return parseFuncDecl();
  case TokenKind::KwInput:
  case TokenKind::KwOutput:
  case TokenKind::KwInOut:
  case TokenKind::KwF32:
  case TokenKind::KwF64:
  case TokenKind::KwI32: return parseArrayDecl();
  case TokenKind::KwRepeat: return parseRepeat();
  case TokenKind::Identifier: {
    std::unique_ptr<Equation> eq = parseEquation();
    if (!eq)
      return false;
    program_->statements.push_back(eq.get());
    program_->equations.push_back(std::move(eq));
    return true;
  }
  case TokenKind::RBrace:
    // Skipping to the next ';' would swallow the next statement: drop just the brace.
    errorHere("'}' without a matching 'repeat' block");
    advance();
    return true;
  default:
    if (tok_.isKeyword())
      return errorHere(Twine("'") + tok_.text + "' is a keyword and cannot start a statement");
    return errorHere(Twine("expected a declaration or an equation, found ") + spelling(tok_.kind));
  }
}

bool Parser::parseParamDecl() {
  advance(); // 'param'
  do {
    auto param = std::make_unique<ParamDecl>();
    if (!parseIdentifier(param->name, param->range, "a param name"))
      return false;
    program_->params.push_back(std::move(param));
  } while (consume(TokenKind::Comma));
  return expect(TokenKind::Semi, "after the param declaration");
}

bool Parser::parseConstDecl() {
  advance(); // 'const'
  auto c = std::make_unique<ConstDecl>();
  if (!parseIdentifier(c->name, c->range, "a const name") || !expect(TokenKind::Assign, "after the const name"))
    return false;
  c->init = parseExpr();
  if (!c->init || !expect(TokenKind::Semi, "after the const declaration"))
    return false;
  program_->consts.push_back(std::move(c));
  return true;
}

std::optional<Boundary> Parser::parseBoundaryKind() {
  Boundary b;
  if (tok_.is(TokenKind::KwZero))
    b = Boundary::Zero;
  else if (tok_.is(TokenKind::KwClamp))
    b = Boundary::Clamp;
  else if (tok_.is(TokenKind::KwMirror))
    b = Boundary::Mirror;
  else {
    errorHere(Twine("expected a boundary kind ('zero', 'clamp' or 'mirror'), found ") +
              (tok_.is(TokenKind::Identifier) ? Twine("'") + tok_.text + "'" : Twine(spelling(tok_.kind))));
    return std::nullopt;
  }
  advance();
  return b;
}

bool Parser::parseBoundaryDecl() {
  advance(); // 'boundary'
  std::optional<Boundary> b = parseBoundaryKind();
  if (!b)
    return false;
  program_->defaultBoundary = *b;
  return expect(TokenKind::Semi, "after the boundary declaration");
}

bool Parser::parseFuncDecl() {
  advance(); // 'func'
  auto f = std::make_unique<FuncDecl>();
  if (!parseIdentifier(f->name, f->range, "a function name") ||
      !expect(TokenKind::LParen, "after the function name"))
    return false;
  if (!tok_.is(TokenKind::RParen)) {
    do {
      std::string name;
      SMRange range;
      if (!parseIdentifier(name, range, "a function argument name"))
        return false;
      f->params.push_back(std::move(name));
      f->paramRanges.push_back(range);
    } while (consume(TokenKind::Comma));
  }
  if (!expect(TokenKind::RParen, "after the function arguments") ||
      !expect(TokenKind::Assign, "before the function body"))
    return false;
  f->body = parseExpr();
  if (!f->body || !expect(TokenKind::Semi, "after the function body"))
    return false;
  program_->funcs.push_back(std::move(f));
  return true;
}

bool Parser::parseArrayDecl() {
  auto a = std::make_unique<ArrayDecl>();
  switch (tok_.kind) {
  case TokenKind::KwInput: a->kind = ArrayKind::Input; advance(); break;
  case TokenKind::KwOutput: a->kind = ArrayKind::Output; advance(); break;
  case TokenKind::KwInOut: a->kind = ArrayKind::InOut; advance(); break;
  default: a->kind = ArrayKind::Local; break;
  }
  switch (tok_.kind) {
  case TokenKind::KwF32: a->elemType = ElemType::F32; break;
  case TokenKind::KwF64: a->elemType = ElemType::F64; break;
  case TokenKind::KwI32: a->elemType = ElemType::I32; break;
  default:
    return errorHere(Twine("expected an element type ('f32', 'f64' or 'i32'), found ") +
                     (tok_.is(TokenKind::Identifier) ? Twine("'") + tok_.text + "'" : Twine(spelling(tok_.kind))));
  }
  advance();
  if (!parseIdentifier(a->name, a->range, "an array name"))
    return false;
  if (consume(TokenKind::LBracket) && !parseExprList(a->shape, TokenKind::RBracket, "after the array shape"))
    return false;
  if (consume(TokenKind::KwBoundary)) {
    std::optional<Boundary> b = parseBoundaryKind();
    if (!b)
      return false;
    a->boundary = b;
  }
  if (!expect(TokenKind::Semi, "after the array declaration"))
    return false;
  program_->arrays.push_back(std::move(a));
  return true;
}

std::unique_ptr<Equation> Parser::parseEquation() {
  auto eq = std::make_unique<Equation>();
  SMLoc start = tok_.loc();
  SMRange nameRange;
  if (!parseIdentifier(eq->target, nameRange, "an array name"))
    return nullptr;
  if (consume(TokenKind::LBracket) && !parseExprList(eq->lhsIndices, TokenKind::RBracket, "after the indices"))
    return nullptr;
  eq->lhsRange = rangeFrom(start);
  if (consume(TokenKind::Assign))
    eq->op = AssignOp::Assign;
  else if (consume(TokenKind::PlusAssign))
    eq->op = AssignOp::AddAssign;
  else if (consume(TokenKind::MinusAssign))
    eq->op = AssignOp::SubAssign;
  else {
    errorHere(Twine("expected '=', '+=' or '-=' after the left-hand side, found ") +
              (tok_.is(TokenKind::Identifier) ? Twine("'") + tok_.text + "'" : Twine(spelling(tok_.kind))));
    return nullptr;
  }
  eq->rhs = parseExpr();
  if (!eq->rhs)
    return nullptr;
  // A scatter's `for y in 0..H, ...`. `for` is not a keyword: it means this only after a right-hand side.
  if (tok_.is(TokenKind::Identifier) && tok_.text == "for") {
    advance();
    unsigned height = 0;
    if (!parseBindings(eq->scatterBindings, height, "scatter"))
      return nullptr;
  }
  if (consume(TokenKind::KwWhere)) {
    eq->where = parseExpr();
    if (!eq->where)
      return nullptr;
  }
  if (!expect(TokenKind::Semi, "at the end of the equation"))
    return nullptr;
  eq->range = rangeFrom(start);
  return eq;
}

bool Parser::parseRepeat() {
  SMLoc start = tok_.loc();
  advance(); // 'repeat'
  auto block = std::make_unique<RepeatBlock>();
  block->var = std::make_unique<IndexVar>();
  if (!parseIdentifier(block->var->name, block->var->range, "a repeat variable name") ||
      !expect(TokenKind::KwIn, "after the repeat variable") || !parseRange(block->lo, block->hi) ||
      !parseUntil(*block) || !expect(TokenKind::LBrace, "to open the repeat block")) {
    // Skip the whole block, so that its equations are not reported again out of context.
    while (!tok_.is(TokenKind::Eof) && !tok_.is(TokenKind::LBrace) && !tok_.is(TokenKind::Semi))
      advance();
    if (consume(TokenKind::LBrace)) {
      while (!tok_.is(TokenKind::Eof) && !tok_.is(TokenKind::RBrace))
        advance();
      consume(TokenKind::RBrace);
    }
    return true;
  }
  while (!tok_.is(TokenKind::RBrace) && !tok_.is(TokenKind::Eof) && !diags_.tooMany()) {
    depthReported_ = false;
    heights_.clear();
    if (tok_.is(TokenKind::Identifier)) {
      if (std::unique_ptr<Equation> eq = parseEquation()) {
        block->body.push_back(std::move(eq));
        continue;
      }
    } else if (tok_.is(TokenKind::KwRepeat)) {
      errorHere("repeat blocks cannot be nested");
    } else if (tok_.isKeyword()) {
      errorHere(Twine("only equations may appear in a repeat block, found '") + tok_.text + "'");
    } else {
      errorHere(Twine("expected an equation or '}' in the repeat block, found ") + spelling(tok_.kind));
    }
    skipToStatementEnd(true);
  }
  if (!expect(TokenKind::RBrace, "to close the repeat block"))
    return false;
  block->range = rangeFrom(start);
  program_->statements.push_back(block.get());
  program_->repeats.push_back(std::move(block));
  return true;
}

// `until unchanged(A, B)` after a repeat block's range, if present. `until` and `unchanged` are not
// keywords: they mean this only here, so programs keep them as names.
bool Parser::parseUntil(RepeatBlock &block) {
  if (!tok_.is(TokenKind::Identifier) || tok_.text != "until")
    return true;
  advance();
  if (!tok_.is(TokenKind::Identifier) || tok_.text != "unchanged")
    return errorHere(Twine("expected 'unchanged(' after 'until', found ") +
                     (tok_.is(TokenKind::Identifier) ? "'" + tok_.text + "'" : Twine(spelling(tok_.kind))));
  advance();
  if (!expect(TokenKind::LParen, "after 'unchanged'"))
    return false;
  do {
    std::string name;
    SMRange range;
    if (!parseIdentifier(name, range, "an array name"))
      return false;
    block.untilUnchanged.push_back(std::move(name));
    block.untilRanges.push_back(range);
  } while (consume(TokenKind::Comma));
  return expect(TokenKind::RParen, "to close 'unchanged('");
}

bool Parser::parseRange(ExprPtr &lo, ExprPtr &hi) {
  lo = parseExpr();
  if (!lo || !expect(TokenKind::DotDot, "in the range (written 'lo..hi')"))
    return false;
  hi = parseExpr();
  return hi != nullptr;
}

bool Parser::parseExprList(std::vector<ExprPtr> &out, TokenKind close, const char *context) {
  do {
    ExprPtr e = parseExpr();
    if (!e)
      return false;
    out.push_back(std::move(e));
  } while (consume(TokenKind::Comma));
  return expect(close, context);
}

// ---------------------------------------------------------------------------------------------
// Expressions

ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this);
  if (depth_ > kMaxNestingDepth) {
    tooDeep(tok_.range());
    return nullptr;
  }
  return parseOr();
}

ExprPtr Parser::parseOr() {
  ExprPtr lhs = parseAnd();
  while (lhs && tok_.is(TokenKind::OrOr)) {
    advance();
    ExprPtr rhs = parseAnd();
    if (!rhs)
      return nullptr;
    SMRange r(lhs->range.Start, rhs->range.End);
    unsigned h = std::max(heightOf(lhs.get()), heightOf(rhs.get()));
    lhs = finish(std::make_unique<Binary>(BinaryOp::Or, std::move(lhs), std::move(rhs), r), h);
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  ExprPtr lhs = parseCmp();
  while (lhs && tok_.is(TokenKind::AndAnd)) {
    advance();
    ExprPtr rhs = parseCmp();
    if (!rhs)
      return nullptr;
    SMRange r(lhs->range.Start, rhs->range.End);
    unsigned h = std::max(heightOf(lhs.get()), heightOf(rhs.get()));
    lhs = finish(std::make_unique<Binary>(BinaryOp::And, std::move(lhs), std::move(rhs), r), h);
  }
  return lhs;
}

static std::optional<BinaryOp> comparisonOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::Less: return BinaryOp::Lt;
  case TokenKind::LessEq: return BinaryOp::Le;
  case TokenKind::Greater: return BinaryOp::Gt;
  case TokenKind::GreaterEq: return BinaryOp::Ge;
  case TokenKind::EqEq: return BinaryOp::Eq;
  case TokenKind::NotEq: return BinaryOp::Ne;
  default: return std::nullopt;
  }
}

ExprPtr Parser::parseCmp() {
  ExprPtr lhs = parseAdd();
  if (!lhs)
    return nullptr;
  std::optional<BinaryOp> op = comparisonOp(tok_.kind);
  if (!op)
    return lhs;
  advance();
  ExprPtr rhs = parseAdd();
  if (!rhs)
    return nullptr;
  if (comparisonOp(tok_.kind)) {
    errorHere("comparisons cannot be chained; join them with '&&'");
    return nullptr;
  }
  SMRange r(lhs->range.Start, rhs->range.End);
  unsigned h = std::max(heightOf(lhs.get()), heightOf(rhs.get()));
  return finish(std::make_unique<Binary>(*op, std::move(lhs), std::move(rhs), r), h);
}

ExprPtr Parser::parseAdd() {
  ExprPtr lhs = parseMul();
  while (lhs && (tok_.is(TokenKind::Plus) || tok_.is(TokenKind::Minus))) {
    BinaryOp op = tok_.is(TokenKind::Plus) ? BinaryOp::Add : BinaryOp::Sub;
    advance();
    ExprPtr rhs = parseMul();
    if (!rhs)
      return nullptr;
    SMRange r(lhs->range.Start, rhs->range.End);
    unsigned h = std::max(heightOf(lhs.get()), heightOf(rhs.get()));
    lhs = finish(std::make_unique<Binary>(op, std::move(lhs), std::move(rhs), r), h);
  }
  return lhs;
}

ExprPtr Parser::parseMul() {
  ExprPtr lhs = parseUnary();
  while (lhs && (tok_.is(TokenKind::Star) || tok_.is(TokenKind::Slash) || tok_.is(TokenKind::Percent))) {
    BinaryOp op = tok_.is(TokenKind::Star) ? BinaryOp::Mul : tok_.is(TokenKind::Slash) ? BinaryOp::Div : BinaryOp::Mod;
    advance();
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    SMRange r(lhs->range.Start, rhs->range.End);
    unsigned h = std::max(heightOf(lhs.get()), heightOf(rhs.get()));
    lhs = finish(std::make_unique<Binary>(op, std::move(lhs), std::move(rhs), r), h);
  }
  return lhs;
}

// Recursion depth is counted where the grammar recurses: parseExpr (parentheses, indices, arguments,
// ranges), unary operators and reductions; one source nesting level is one count.
ExprPtr Parser::parseUnary() {
  if (tok_.is(TokenKind::Minus) || tok_.is(TokenKind::Bang)) {
    DepthGuard guard(*this);
    if (depth_ > kMaxNestingDepth) {
      tooDeep(tok_.range());
      return nullptr;
    }
    UnaryOp op = tok_.is(TokenKind::Minus) ? UnaryOp::Neg : UnaryOp::Not;
    SMLoc start = tok_.loc();
    advance();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    unsigned h = heightOf(operand.get());
    return finish(std::make_unique<Unary>(op, std::move(operand), rangeFrom(start)), h);
  }
  if (tok_.is(TokenKind::KwSum))
    return parseReduction(ReductionOp::Sum);
  if ((tok_.is(TokenKind::KwMax) || tok_.is(TokenKind::KwMin)) && looksLikeReduction())
    return parseReduction(tok_.is(TokenKind::KwMax) ? ReductionOp::Max : ReductionOp::Min);
  return parsePrimary();
}

// At 'max' or 'min': a reduction if '(' is followed by `ident {, ident} in`, a two-argument call otherwise.
bool Parser::looksLikeReduction() {
  size_t saved = lexer_.position();
  Token savedTok = tok_;
  SMLoc savedEnd = prevEnd_;
  lexer_.setMuted(true);
  bool result = false;
  advance();
  if (consume(TokenKind::LParen)) {
    while (consume(TokenKind::Identifier)) {
      if (tok_.is(TokenKind::KwIn)) {
        result = true;
        break;
      }
      if (!consume(TokenKind::Comma))
        break;
    }
  }
  lexer_.setMuted(false);
  lexer_.reset(saved);
  tok_ = savedTok;
  prevEnd_ = savedEnd;
  return result;
}

ExprPtr Parser::parseReduction(ReductionOp op) {
  DepthGuard guard(*this);
  if (depth_ > kMaxNestingDepth) {
    tooDeep(tok_.range());
    return nullptr;
  }
  SMLoc start = tok_.loc();
  advance(); // 'sum' / 'max' / 'min'
  auto red = std::make_unique<Reduction>(op, SMRange(start, start));
  if (!expect(TokenKind::LParen, "after the reduction operator"))
    return nullptr;
  unsigned h = 0;
  if (!parseBindings(red->bindings, h, "reduction"))
    return nullptr;
  if (consume(TokenKind::KwWhere)) {
    red->where = parseExpr();
    if (!red->where)
      return nullptr;
    h = std::max(h, heightOf(red->where.get()));
  }
  if (!expect(TokenKind::RParen, "after the reduction's ranges"))
    return nullptr;
  // The body is a multiplicative expression: `sum(k in 0..N) a[k] * b[k] + c` adds c once.
  red->body = parseMul();
  if (!red->body)
    return nullptr;
  h = std::max(h, heightOf(red->body.get()));
  red->range = rangeFrom(start);
  return finish(std::move(red), h);
}

// `k1, k2 in lo..hi, m in lo..hi`: a reduction's or a scatter's variables and their ranges. `height` grows
// to the tallest bound.
bool Parser::parseBindings(std::vector<RangeBinding> &bindings, unsigned &height, const char *what) {
  do {
    RangeBinding binding;
    do {
      auto var = std::make_unique<IndexVar>();
      if (!parseIdentifier(var->name, var->range, (Twine("a ") + what + " variable name").str().c_str()))
        return false;
      binding.vars.push_back(std::move(var));
    } while (consume(TokenKind::Comma));
    if (!expect(TokenKind::KwIn, (Twine("after the ") + what + " variables").str().c_str()) ||
        !parseRange(binding.lo, binding.hi))
      return false;
    height = std::max({height, heightOf(binding.lo.get()), heightOf(binding.hi.get())});
    bindings.push_back(std::move(binding));
  } while (consume(TokenKind::Comma));
  return true;
}

// `sample(A, e1, ..., en)` is a read of A at positions that may fall between elements.
ExprPtr Parser::finishSample(std::vector<ExprPtr> args, SMLoc start, unsigned height) {
  const auto *array = args.empty() ? nullptr : dyn_cast<VarRef>(args.front().get());
  if (!array) {
    diags_.error(args.empty() ? rangeFrom(start) : args.front()->range,
                 "the first argument of sample() is the name of the array it reads");
    return nullptr;
  }
  std::string name = array->name;
  std::vector<ExprPtr> positions(std::make_move_iterator(args.begin() + 1),
                                 std::make_move_iterator(args.end()));
  auto read = std::make_unique<ArrayRead>(std::move(name), std::move(positions), rangeFrom(start));
  read->sampled = true;
  return finish(std::move(read), height);
}

ExprPtr Parser::parsePrimary() {
  SMLoc start = tok_.loc();
  switch (tok_.kind) {
  case TokenKind::IntLit: {
    int64_t value = *parseIntLiteral(tok_.text); // the lexer rejected literals out of range
    advance();
    return finish(std::make_unique<IntLit>(value, rangeFrom(start)), 0);
  }
  case TokenKind::FloatLit: {
    double value = *parseFloatLiteral(tok_.text);
    advance();
    return finish(std::make_unique<FloatLit>(value, rangeFrom(start)), 0);
  }
  case TokenKind::Identifier:
  case TokenKind::KwSelect:
  case TokenKind::KwMax:
  case TokenKind::KwMin: {
    std::string name = tok_.text.str();
    bool isKeyword = !tok_.is(TokenKind::Identifier);
    advance();
    if (consume(TokenKind::LParen)) {
      std::vector<ExprPtr> args;
      if (!consume(TokenKind::RParen) && !parseExprList(args, TokenKind::RParen, "after the call's arguments"))
        return nullptr;
      unsigned h = heightOf(args);
      if (!isKeyword && name == "sample")
        return finishSample(std::move(args), start, h);
      return finish(std::make_unique<Call>(std::move(name), std::move(args), rangeFrom(start)), h);
    }
    if (isKeyword) {
      diags_.error(rangeFrom(start), Twine("'") + name + "' is a keyword; expected '(' after it");
      return nullptr;
    }
    if (consume(TokenKind::LBracket)) {
      std::vector<ExprPtr> indices;
      if (!parseExprList(indices, TokenKind::RBracket, "after the indices"))
        return nullptr;
      unsigned h = heightOf(indices);
      return finish(std::make_unique<ArrayRead>(std::move(name), std::move(indices), rangeFrom(start)), h);
    }
    return finish(std::make_unique<VarRef>(std::move(name), rangeFrom(start)), 0);
  }
  case TokenKind::LParen: {
    advance();
    std::vector<ExprPtr> elements;
    if (!parseExprList(elements, TokenKind::RParen, "to close the parenthesis"))
      return nullptr;
    if (elements.size() == 1) {
      // Parentheses only group: the inner expression, widened to include them for diagnostics.
      ExprPtr inner = std::move(elements.front());
      unsigned h = heights_.lookup(inner.get());
      heights_.erase(inner.get());
      inner->range = rangeFrom(start);
      heights_[inner.get()] = h;
      return inner;
    }
    unsigned h = heightOf(elements);
    return finish(std::make_unique<Tuple>(std::move(elements), rangeFrom(start)), h);
  }
  case TokenKind::Error:
    return nullptr;
  default:
    if (tok_.isKeyword())
      errorHere(Twine("'") + tok_.text + "' is a keyword and cannot appear here in an expression");
    else
      errorHere(Twine("expected an expression, found ") + spelling(tok_.kind));
    return nullptr;
  }
}

std::unique_ptr<Program> polyc::dsl::parseProgram(SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diags) {
  return Parser(sm, bufferId, diags).run();
}
