// The descriptive parts of emitted code shared by every target (see ProgramInterface.h): banner,
// library header, constants, ProgramInfo, and the .poly text of equations for comments.
#include "compiler/codegen/ProgramInterface.h"

#include "compiler/codegen/ExprPrinter.h"

#include "compiler/codegen/Names.h"
#include "dsl/Affine.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

#ifndef POLYC_VERSION
#define POLYC_VERSION "unknown"
#endif

using namespace polyc;
using namespace polyc::codegen;
using llvm::cast;
using llvm::dyn_cast;

std::string polyc::codegen::programName(const CodegenInput &input) {
  std::string stem = llvm::sys::path::stem(input.sourcePath).str();
  if (stem.empty() && input.model.program)
    stem = llvm::sys::path::stem(input.model.program->fileName).str();
  std::string name;
  for (char c : stem)
    name += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (name.empty() || isdigit(static_cast<unsigned char>(name[0])))
    name = "_" + name;
  return cIdentifier(name);
}

// ---------------------------------------------------------------------------------------------
// Affine forms

std::string AffineForm::toIsl(const std::vector<std::string> &paramNames) const {
  std::string text;
  for (auto [param, coefficient] : terms) {
    if (coefficient == 0)
      continue;
    std::string name = param < paramNames.size() ? paramNames[param] : "?";
    if (!text.empty())
      text += coefficient < 0 ? " - " : " + ";
    else if (coefficient < 0)
      text += "-";
    int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
    text += magnitude == 1 ? name : std::to_string(magnitude) + "*" + name;
  }
  if (text.empty())
    return std::to_string(constant);
  if (constant != 0)
    text += (constant < 0 ? " - " : " + ") + std::to_string(constant < 0 ? -constant : constant);
  return text;
}

static void addScaled(AffineForm &into, const AffineForm &from, int64_t scale) {
  into.constant += scale * from.constant;
  for (auto [param, coefficient] : from.terms) {
    bool merged = false;
    for (auto &term : into.terms)
      if (term.first == param) {
        term.second += scale * coefficient;
        merged = true;
      }
    if (!merged)
      into.terms.push_back({param, scale * coefficient});
  }
}

std::optional<AffineForm> polyc::codegen::affineForm(const ast::Expr &expr, const ast::Program &program) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
    return AffineForm{cast<ast::IntLit>(expr).value, {}};
  case ast::Expr::Kind::VarRef: {
    auto &ref = cast<ast::VarRef>(expr);
    if (auto *p = std::get_if<const ast::ParamDecl *>(&ref.binding)) {
      for (unsigned k = 0; k < program.params.size(); ++k)
        if (program.params[k].get() == *p)
          return AffineForm{0, {{k, 1}}};
      return std::nullopt;
    }
    if (auto *c = std::get_if<const ast::ConstDecl *>(&ref.binding))
      if (auto *v = std::get_if<int64_t>(&(*c)->value))
        return AffineForm{*v, {}};
    return std::nullopt;
  }
  case ast::Expr::Kind::Unary: {
    auto &u = cast<ast::Unary>(expr);
    if (u.op != ast::UnaryOp::Neg)
      return std::nullopt;
    auto operand = affineForm(*u.operand, program);
    if (!operand)
      return std::nullopt;
    AffineForm result;
    addScaled(result, *operand, -1);
    return result;
  }
  case ast::Expr::Kind::Binary: {
    auto &b = cast<ast::Binary>(expr);
    auto lhs = affineForm(*b.lhs, program), rhs = affineForm(*b.rhs, program);
    if (!lhs || !rhs)
      return std::nullopt;
    AffineForm result;
    switch (b.op) {
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub:
      addScaled(result, *lhs, 1);
      addScaled(result, *rhs, b.op == ast::BinaryOp::Add ? 1 : -1);
      return result;
    case ast::BinaryOp::Mul:
      if (lhs->terms.empty()) {
        addScaled(result, *rhs, lhs->constant);
        return result;
      }
      if (rhs->terms.empty()) {
        addScaled(result, *lhs, rhs->constant);
        return result;
      }
      return std::nullopt;
    case ast::BinaryOp::Div:
    case ast::BinaryOp::Mod:
      // Only between constants (`M / 2` with `const M = 15`): floor semantics, as isl.
      if (!lhs->terms.empty() || !rhs->terms.empty() || rhs->constant == 0)
        return std::nullopt;
      {
        int64_t a = lhs->constant, d = rhs->constant;
        int64_t q = a / d;
        if ((a % d != 0) && ((a < 0) != (d < 0)))
          --q;
        return AffineForm{b.op == ast::BinaryOp::Div ? q : a - q * d, {}};
      }
    default:
      return std::nullopt;
    }
  }
  default:
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------
// .poly text of expressions, for comments

static int polyPrec(const ast::Expr &e) {
  if (auto *b = dyn_cast<ast::Binary>(&e)) {
    switch (b->op) {
    case ast::BinaryOp::Or: return 1;
    case ast::BinaryOp::And: return 2;
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub: return 4;
    case ast::BinaryOp::Mul:
    case ast::BinaryOp::Div:
    case ast::BinaryOp::Mod: return 5;
    default: return 3;
    }
  }
  if (llvm::isa<ast::Unary>(e))
    return 6;
  return 7; // a reduction too: see exprText's Binary case

}

static std::string polyOperand(const ast::Expr &e, int needed) {
  std::string text = exprText(e);
  return polyPrec(e) < needed ? "(" + text + ")" : text;
}

static const char *polySpelling(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Add: return "+";
  case ast::BinaryOp::Sub: return "-";
  case ast::BinaryOp::Mul: return "*";
  case ast::BinaryOp::Div: return "/";
  case ast::BinaryOp::Mod: return "%";
  case ast::BinaryOp::Lt: return "<";
  case ast::BinaryOp::Le: return "<=";
  case ast::BinaryOp::Gt: return ">";
  case ast::BinaryOp::Ge: return ">=";
  case ast::BinaryOp::Eq: return "==";
  case ast::BinaryOp::Ne: return "!=";
  case ast::BinaryOp::And: return "&&";
  case ast::BinaryOp::Or: return "||";
  }
  return "?";
}

static std::string joinExprs(const std::vector<ast::ExprPtr> &exprs) {
  std::string text;
  for (auto &e : exprs)
    text += (text.empty() ? "" : ", ") + exprText(*e);
  return text;
}

std::string polyc::codegen::exprText(const ast::Expr &expr) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
    return std::to_string(cast<ast::IntLit>(expr).value);
  case ast::Expr::Kind::FloatLit: {
    char buffer[64];
    snprintf(buffer, sizeof buffer, "%g", cast<ast::FloatLit>(expr).value);
    std::string text = buffer;
    if (text.find_first_of(".eEn") == std::string::npos)
      text += ".0";
    return text;
  }
  case ast::Expr::Kind::VarRef:
    return cast<ast::VarRef>(expr).name;
  case ast::Expr::Kind::ArrayRead: {
    auto &r = cast<ast::ArrayRead>(expr);
    if (r.sampled)
      return "sample(" + r.name + ", " + joinExprs(r.indices) + ")";
    return r.name + "[" + joinExprs(r.indices) + "]";
  }
  case ast::Expr::Kind::Unary: {
    auto &u = cast<ast::Unary>(expr);
    return std::string(u.op == ast::UnaryOp::Neg ? "-" : "!") + polyOperand(*u.operand, 6);
  }
  case ast::Expr::Kind::Binary: {
    auto &b = cast<ast::Binary>(expr);
    int prec = polyPrec(expr);
    // A reduction's body extends to the right over a product: on the left of * / % it needs parentheses.
    std::string lhs = polyOperand(*b.lhs, prec);
    if (llvm::isa<ast::Reduction>(*b.lhs) && prec == 5)
      lhs = "(" + lhs + ")";
    return lhs + " " + polySpelling(b.op) + " " + polyOperand(*b.rhs, prec + 1);
  }
  case ast::Expr::Kind::Call: {
    auto &c = cast<ast::Call>(expr);
    return c.callee + "(" + joinExprs(c.args) + ")";
  }
  case ast::Expr::Kind::Reduction: {
    auto &r = cast<ast::Reduction>(expr);
    std::string text = r.op == ast::ReductionOp::Sum ? "sum(" : r.op == ast::ReductionOp::Max ? "max(" : "min(";
    for (size_t k = 0; k < r.bindings.size(); ++k) {
      std::vector<std::string> names;
      for (auto &v : r.bindings[k].vars)
        names.push_back(v->name);
      text += (k ? ", " : "") + llvm::join(names, ", ") + " in " + exprText(*r.bindings[k].lo) + ".." +
              exprText(*r.bindings[k].hi);
    }
    if (r.where)
      text += " where " + exprText(*r.where);
    return text + ") " + polyOperand(*r.body, 5);
  }
  case ast::Expr::Kind::Tuple:
    return "(" + joinExprs(cast<ast::Tuple>(expr).elements) + ")";
  }
  return "?";
}

std::string polyc::codegen::equationText(const ast::Equation &eq) {
  std::string text = eq.target;
  if (!eq.lhsIndices.empty())
    text += "[" + joinExprs(eq.lhsIndices) + "]";
  text += eq.op == ast::AssignOp::Assign ? " = " : eq.op == ast::AssignOp::AddAssign ? " += " : " -= ";
  text += exprText(*eq.rhs);
  if (eq.where)
    text += " where " + exprText(*eq.where);
  return text + ";";
}

std::string polyc::codegen::equationLocation(const CodegenInput &input, const ast::Equation &eq) {
  std::string file = llvm::sys::path::filename(input.sourcePath).str();
  if (!input.sourceMgr || !eq.range.Start.isValid())
    return file;
  unsigned buffer = input.sourceMgr->FindBufferContainingLoc(eq.range.Start);
  if (buffer == 0)
    return file;
  return file + ":" + std::to_string(input.sourceMgr->getLineAndColumn(eq.range.Start, buffer).first);
}

// ---------------------------------------------------------------------------------------------
// Descriptions

std::string polyc::codegen::describeKind(allocate::AllocationKind kind) {
  switch (kind) {
  case allocate::AllocationKind::Sequential: return "sequential";
  case allocate::AllocationKind::DataParallel: return "data-parallel";
  case allocate::AllocationKind::Reduction: return "reduction (pattern-parallel)";
  case allocate::AllocationKind::FixedWavefront: return "fixed wavefront";
  case allocate::AllocationKind::FlexibleWavefront: return "flexible wavefront";
  }
  return "unknown";
}

static std::string statementList(const std::vector<unsigned> &statements) {
  std::string text;
  for (unsigned s : statements)
    text += (text.empty() ? "S" : ", S") + std::to_string(s);
  return text;
}

std::string polyc::codegen::describeBand(const CodegenInput &input, unsigned index) {
  const schedule::Band &band = input.schedule.bands[index];
  std::string text = "band " + std::to_string(index) + " over " + statementList(band.statements) + ": (";
  for (size_t d = 0; d < band.dimNames.size(); ++d) {
    bool parallel = d < band.coincident.size() && band.coincident[d];
    text += (d ? ", " : "") + band.dimNames[d] + (parallel ? " parallel" : " sequential");
  }
  text += ")";
  if (band.isSequentialRepeat)
    text += ", the repeat loop";
  if (!band.hyperplane.empty()) {
    std::string pi;
    for (int64_t c : band.hyperplane)
      pi += (pi.empty() ? "" : ", ") + std::to_string(c);
    text += ", Lamport hyperplane pi = (" + pi + ")";
    if (!band.hyperplaneCount.empty())
      text += ", " + band.hyperplaneCount + " hyperplanes";
  }
  return text;
}

std::string polyc::codegen::describeAllocation(const CodegenInput &input, unsigned index) {
  if (index >= input.allocation.bands.size())
    return "band " + std::to_string(index) + ": sequential (no allocation given)";
  const allocate::BandAllocation &a = input.allocation.bands[index];
  std::string text = "band " + std::to_string(a.band) + ": ";
  if (!a.runtimeCondition.empty() && a.otherwise)
    text += describeKind(a.kind) + " if " + a.runtimeCondition + ", else " + describeKind(*a.otherwise);
  else
    text += describeKind(a.kind);
  if (a.wavefront)
    text += " (rows: dimension " + std::to_string(a.wavefront->rowDim) + ", columns: dimension " +
            std::to_string(a.wavefront->columnDim) + ")";
  return text;
}

void polyc::codegen::printBanner(const CodegenInput &input, const std::string &fileName, const std::string &what,
                                 CodeWriter &w) {
  w.comment(fileName + ": " + what + ", generated by polyc " POLYC_VERSION " from " + input.sourcePath + ".");
  w.comment("Do not edit: regenerate with");
  w.comment("  " + input.commandLine);
  w.comment("");
  w.comment("Statements:");
  for (const model::Statement &s : input.model.statements)
    w.comment("  " + s.name + ": " + equationText(*s.equation) + "  (" + equationLocation(input, *s.equation) + ")");
  w.comment("Schedule:");
  for (unsigned b = 0; b < input.schedule.bands.size(); ++b)
    w.comment("  " + describeBand(input, b));
  if (!input.schedule.fusionGroups.empty())
    for (const schedule::FusionGroup &g : input.schedule.fusionGroups)
      if (g.statements.size() > 1)
        w.comment("  fused: " + statementList(g.statements) + " (" + g.reason + ")");
  for (const schedule::FoldedStorage &f : input.schedule.folded)
    w.comment("  folded storage: " + f.array + " dimension " + std::to_string(f.dim) + " modulo " +
              (f.windowValue > 0 ? std::to_string(f.windowValue) : f.window));
  w.comment("Allocation:");
  for (unsigned b = 0; b < input.allocation.bands.size(); ++b) {
    w.comment("  " + describeAllocation(input, b));
    if (!input.allocation.bands[b].reason.empty())
      w.comment("    why: " + input.allocation.bands[b].reason);
  }
}

// ---------------------------------------------------------------------------------------------
// Library header

std::vector<const model::ArrayInfo *> polyc::codegen::interfaceArrays(const model::Model &model) {
  std::vector<const model::ArrayInfo *> arrays;
  for (const model::ArrayInfo &a : model.arrays)
    if (a.decl && a.decl->kind != ast::ArrayKind::Local)
      arrays.push_back(&a);
  return arrays;
}

std::string polyc::codegen::headerTypeName(ast::ElemType type) {
  switch (type) {
  case ast::ElemType::F32: return "float";
  case ast::ElemType::F64: return "double";
  case ast::ElemType::I32: return "int32_t";
  }
  return "float";
}

std::string polyc::codegen::runFunctionSignature(const CodegenInput &input) {
  std::string prog = programName(input);
  std::string text = "void " + prog + "_run(const " + prog + "_params *p";
  for (const model::ArrayInfo *a : interfaceArrays(input.model)) {
    bool readOnly = a->decl->kind == ast::ArrayKind::Input;
    text += std::string(", ") + (readOnly ? "const " : "") + headerTypeName(a->decl->elemType) + " *" +
            cIdentifier(a->name);
  }
  return text + ")";
}

static std::string shapeText(const ast::ArrayDecl &decl) {
  if (decl.shape.empty())
    return "a scalar";
  std::string text = "[";
  for (size_t d = 0; d < decl.shape.size(); ++d)
    text += (d ? ", " : "") + exprText(*decl.shape[d]);
  return text + "]";
}

GeneratedFile polyc::codegen::emitLibraryHeader(const CodegenInput &input) {
  std::string prog = programName(input);
  CodeWriter w;
  printBanner(input, prog + ".h", "the C interface of " + prog, w);
  w.blank();
  w.line("#pragma once");
  w.blank();
  w.line("#include <stdint.h>");
  w.blank();
  w.line("#ifdef __cplusplus");
  w.line("extern \"C\" {");
  w.line("#endif");
  w.blank();
  w.comment("The program's sizes; every param must be non-negative.");
  for (auto &[name, value] : input.model.paramValues)
    w.comment("Built with --param " + name + "=" + std::to_string(value) + ": " + name + " must be " +
              std::to_string(value) + ", the generated loops assume it.");
  w.openBlock("typedef struct " + prog + "_params");
  for (auto &p : input.model.program->params)
    w.line("int64_t " + cIdentifier(p->name) + ";");
  if (input.model.program->params.empty())
    w.line("int64_t unused; // the program has no params");
  w.closeBlock(" " + prog + "_params;");
  w.blank();
  w.comment("Runs the whole program once. Arrays are dense and row-major (C order) with the shapes below, and");
  w.comment("no two overlap; outputs are written, inouts updated in place. Safe to call from several threads at");
  w.comment("once.");
  for (const model::ArrayInfo *a : interfaceArrays(input.model))
    w.comment("  " + cIdentifier(a->name) + ": " + ast::spelling(a->decl->kind) + " " +
              ast::spelling(a->decl->elemType) + " " + shapeText(*a->decl));
  w.line(runFunctionSignature(input) + ";");
  w.blank();
  w.line("#ifdef __cplusplus");
  w.line("}");
  w.line("#endif");
  return {prog + ".h", w.str()};
}

void polyc::codegen::printConstants(const ast::Program &program, CodeWriter &w, const std::string &qualifier) {
  if (program.consts.empty())
    return;
  w.comment("Constants of the program.");
  for (auto &c : program.consts) {
    if (auto *i = std::get_if<int64_t>(&c->value)) {
      w.line(qualifier + " int64_t " + cIdentifier(c->name) + " = " + std::to_string(*i) + ";");
    } else if (auto *d = std::get_if<double>(&c->value)) {
      char buffer[64];
      snprintf(buffer, sizeof buffer, "%.17g", *d);
      std::string text = buffer;
      if (text.find_first_of(".eEn") == std::string::npos)
        text += ".0";
      w.line(qualifier + " double " + cIdentifier(c->name) + " = " + text + ";");
    }
  }
}

static const char *dtypeName(ast::ElemType type) {
  switch (type) {
  case ast::ElemType::F32: return "polyc::rt::DType::F32";
  case ast::ElemType::F64: return "polyc::rt::DType::F64";
  case ast::ElemType::I32: return "polyc::rt::DType::I32";
  }
  return "polyc::rt::DType::F32";
}

static const char *roleName(ast::ArrayKind kind) {
  switch (kind) {
  case ast::ArrayKind::Input: return "polyc::rt::ArrayRole::Input";
  case ast::ArrayKind::Output: return "polyc::rt::ArrayRole::Output";
  default: return "polyc::rt::ArrayRole::InOut";
  }
}

const schedule::StreamedArray *polyc::codegen::streamedArray(const schedule::Schedule &schedule,
                                                             const std::string &array) {
  if (!schedule.streaming)
    return nullptr;
  for (const schedule::StreamedArray &streamed : schedule.streaming->arrays)
    if (streamed.array == array)
      return &streamed;
  return nullptr;
}

llvm::Error polyc::codegen::printContextFromArguments(const CodegenInput &input, const ExprPrinter &exprs,
                                                      CodeWriter &w) {
  const ast::Program &program = *input.model.program;
  w.line("polyc::rt::ProgramInfo info;");
  if (llvm::Error e = printProgramInfo(input, "info", w))
    return e;
  w.line("polyc::rt::RunContext context;");
  std::string paramValues;
  for (auto &p : program.params) {
    w.line("[[maybe_unused]] const int64_t " + cIdentifier(p->name) + " = p->" + cIdentifier(p->name) + ";");
    paramValues += (paramValues.empty() ? "" : ", ") + cIdentifier(p->name);
  }
  w.line("context.params = {" + paramValues + "};");
  w.line("context.arrays.resize(info.arrays.size());");
  std::vector<const model::ArrayInfo *> interface = interfaceArrays(input.model);
  for (unsigned k = 0; k < interface.size(); ++k) {
    const model::ArrayInfo &a = *interface[k];
    std::vector<std::string> extents;
    for (const std::string &extent : exprs.wholeExtents(a))
      extents.push_back("int64_t(" + extent + ")");
    std::string slot = "context.arrays[" + std::to_string(k) + "]";
    w.line(slot + ".spec = &info.arrays[" + std::to_string(k) + "];");
    w.line(slot + ".shape = {" + llvm::join(extents, ", ") + "};");
    w.line(slot + ".bytes.resize(size_t(" + slot + ".elementCount()) * sizeof(" +
           exprs.typeName(a.decl->elemType) + "));");
    if (a.decl->kind != ast::ArrayKind::Output)
      w.line("std::memcpy(" + slot + ".bytes.data(), " + cIdentifier(a.name) + ", " + slot +
             ".bytes.size());");
  }
  return llvm::Error::success();
}

void polyc::codegen::printArgumentsFromContext(const CodegenInput &input, CodeWriter &w) {
  std::vector<const model::ArrayInfo *> interface = interfaceArrays(input.model);
  for (unsigned k = 0; k < interface.size(); ++k) {
    const model::ArrayInfo &a = *interface[k];
    if (a.decl->kind == ast::ArrayKind::Input)
      continue;
    std::string slot = "context.arrays[" + std::to_string(k) + "]";
    w.line("std::memcpy(" + cIdentifier(a.name) + ", " + slot + ".bytes.data(), " + slot + ".bytes.size());");
  }
}

void polyc::codegen::printRowArrayChecks(
    const CodegenInput &input, const ExprPrinter &exprs, CodeWriter &w,
    const std::function<std::string(const model::ArrayInfo &)> &pointer) {
  auto info = [&](const ast::ArrayDecl *decl) {
    return &*llvm::find_if(input.model.arrays, [&](const model::ArrayInfo &a) { return a.decl == decl; });
  };
  for (const ast::RowArrayUse &use : ast::rowArrays(*input.model.program)) {
    const model::ArrayInfo *row = info(use.row);
    std::vector<std::string> bounds, names;
    for (const ast::DirectIndex &target : use.targets) {
      const model::ArrayInfo *array = info(target.array);
      std::string bound = "int64_t(" + exprs.extent(*array, target.dim) + ")";
      if (!llvm::is_contained(bounds, bound))
        bounds.push_back(bound);
      if (!llvm::is_contained(names, target.array->name))
        names.push_back(target.array->name);
    }
    std::string bound =
        bounds.size() == 1 ? bounds.front() : "std::min<int64_t>({" + llvm::join(bounds, ", ") + "})";
    w.line("polyc::rt::checkRowArray(\"" + row->name + "\", " + pointer(*row) + ", int64_t(" +
           exprs.extent(*row, 0) + "), " + bound + ", \"the extent of " + llvm::join(names, " and ") +
           " that its ranges index\");");
  }
}

void polyc::codegen::printRowArrayChecksOfContext(const CodegenInput &input, const ExprPrinter &exprs,
                                                  CodeWriter &w) {
  std::vector<const model::ArrayInfo *> interface = interfaceArrays(input.model);
  printRowArrayChecks(input, exprs, w, [&](const model::ArrayInfo &a) {
    size_t k = size_t(llvm::find(interface, &a) - interface.begin());
    return "reinterpret_cast<const int32_t *>(context.arrays[" + std::to_string(k) + "].bytes.data())";
  });
}

llvm::Error polyc::codegen::printProgramInfo(const CodegenInput &input, const std::string &var, CodeWriter &w) {
  const ast::Program &program = *input.model.program;
  w.line(var + ".name = \"" + programName(input) + "\";");
  std::string params;
  for (auto &p : program.params)
    params += (params.empty() ? "\"" : ", \"") + p->name + "\"";
  w.line(var + ".params = {" + params + "};");
  for (const model::ArrayInfo *a : interfaceArrays(input.model)) {
    std::string shape;
    for (auto &extent : a->decl->shape) {
      std::optional<AffineForm> form = affineForm(*extent, program);
      std::optional<int64_t> divisor;
      if (auto *division = dyn_cast<ast::Binary>(extent.get());
          !form && division && division->op == ast::BinaryOp::Div) { // (H + 1) / 2 (dsl::extentForm)
        divisor = dsl::positiveDivisor(*division);
        form = divisor ? affineForm(*division->lhs, program) : std::nullopt;
      }
      if (!form)
        return llvm::createStringError("the extent '" + exprText(*extent) + "' of array '" + a->name +
                                       "' is not affine in the params");
      std::string terms;
      for (auto [param, coefficient] : form->terms)
        terms += (terms.empty() ? "{" : ", {") + std::to_string(param) + ", " + std::to_string(coefficient) + "}";
      shape += (shape.empty() ? "" : ", ") + std::string("{") + std::to_string(form->constant) + ", {" +
               terms + "}" + (divisor ? ", " + std::to_string(*divisor) : "") + "}";
    }
    const schedule::StreamedArray *streamed = streamedArray(input.schedule, a->name);
    w.comment(a->name + ": " + shapeText(*a->decl) +
              (streamed ? ", streamed in " + std::to_string(streamed->slots) + " slots" : ""));
    w.line(var + ".arrays.push_back({\"" + a->name + "\", " + roleName(a->decl->kind) + ", " +
           dtypeName(a->decl->elemType) + ", {" + shape + "}" +
           (streamed ? ", " + std::to_string(streamed->slots) : "") + "});");
  }
  return llvm::Error::success();
}
