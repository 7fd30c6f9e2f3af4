// Helpers over isl's C++ bindings: the operations they lack, each a thin wrapper around the C API,
// and readable printing of affine expressions.
#include "compiler/model/IslUtil.h"

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/printer.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <cstdlib>
#include <sstream>

namespace polyc::islutil {

// The C API returns null on error (the context continues on error); turn that into the same
// exception the bindings throw, so callers have one error path.
template <typename T> static T checked(T value, isl_ctx *ctx) {
  if (!value.is_null())
    return value;
  isl::exception::throw_last_error(ctx);
  return value;
}

isl::space namedSetSpace(const isl::space &params, const std::string &name,
                         const std::vector<std::string> &dims) {
  isl::space space = params.params().add_named_tuple(name, static_cast<unsigned>(dims.size()));
  isl_space *raw = space.release();
  for (unsigned i = 0; i < dims.size(); ++i)
    raw = isl_space_set_dim_name(raw, isl_dim_set, i, dims[i].c_str());
  return checked(isl::manage(raw), params.ctx().get());
}

isl::space anonymousSetSpace(const isl::space &params, unsigned n) {
  return params.params().add_unnamed_tuple(n);
}

isl::space mapSpace(const isl::space &domain, const isl::space &range) {
  return checked(isl::manage(isl_space_map_from_domain_and_range(domain.copy(), range.copy())),
                 domain.ctx().get());
}

std::string dimName(const isl::set &set, unsigned pos) {
  const char *name = isl_set_get_dim_name(set.get(), isl_dim_set, pos);
  return name ? name : "";
}

unsigned tupleDims(const isl::space &space) {
  isl_size n = isl_space_dim(space.get(), isl_dim_out);
  if (n < 0)
    isl::exception::throw_last_error(space.ctx().get());
  return static_cast<unsigned>(n);
}

isl::map crossProduct(const isl::set &domain, const isl::set &range) {
  return checked(isl::manage(isl_map_from_domain_and_range(domain.copy(), range.copy())), domain.ctx().get());
}

isl::set anonymousSet(const isl::set &set) { return isl::manage(isl_set_reset_tuple_id(set.copy())); }

isl::map anonymousMap(const isl::map &map) {
  return isl::manage(isl_map_reset_tuple_id(isl_map_reset_tuple_id(map.copy(), isl_dim_in), isl_dim_out));
}

isl::set projectOutDims(const isl::set &set, unsigned first, unsigned n) {
  return checked(isl::manage(isl_set_project_out(set.copy(), isl_dim_set, first, n)), set.ctx().get());
}

bool isBox(const isl::set &set) {
  unsigned n = tupleDims(set.space());
  isl::set plain = isl::manage(isl_set_reset_tuple_id(set.copy()));
  if (n == 0)
    return true;
  isl::set box;
  for (unsigned k = 0; k < n; ++k) {
    isl::set projection = projectOutDims(projectOutDims(plain, k + 1, n - k - 1), 0, k);
    box = k == 0 ? projection : isl::manage(isl_set_flat_product(box.release(), projection.release()));
  }
  return box.is_equal(plain);
}

isl::map projectOutInputs(const isl::map &map, unsigned first, unsigned n) {
  return checked(isl::manage(isl_map_project_out(map.copy(), isl_dim_in, first, n)), map.ctx().get());
}

isl::map projectOutOutputs(const isl::map &map, unsigned first, unsigned n) {
  return checked(isl::manage(isl_map_project_out(map.copy(), isl_dim_out, first, n)), map.ctx().get());
}

isl::map rangeMap(const isl::map &map) {
  return checked(isl::manage(isl_map_range_map(map.copy())), map.ctx().get());
}

isl::map padOutputs(const isl::map &map, unsigned n) {
  unsigned old = map.range_tuple_dim();
  isl_map *raw = isl_map_add_dims(map.copy(), isl_dim_out, n);
  for (unsigned i = 0; i < n; ++i)
    raw = isl_map_fix_si(raw, isl_dim_out, old + i, 0);
  return checked(isl::manage(raw), map.ctx().get());
}

isl::map lexGe(const isl::space &setSpace) {
  return checked(isl::manage(isl_map_lex_ge(setSpace.copy())), setSpace.ctx().get());
}

isl::map lexLt(const isl::space &setSpace) {
  return checked(isl::manage(isl_map_lex_lt(setSpace.copy())), setSpace.ctx().get());
}

bool isBounded(const isl::set &set) {
  isl_bool bounded = isl_set_is_bounded(set.get());
  if (bounded < 0)
    isl::exception::throw_last_error(set.ctx().get());
  return bounded == isl_bool_true;
}

isl::pw_aff dimMax(const isl::set &set, unsigned pos) {
  return checked(isl::manage(isl_set_dim_max(set.copy(), pos)), set.ctx().get());
}

isl::pw_aff dimMin(const isl::set &set, unsigned pos) {
  return checked(isl::manage(isl_set_dim_min(set.copy(), pos)), set.ctx().get());
}

std::optional<int64_t> countPoints(const isl::set &set) {
  if (!isBounded(set))
    return std::nullopt;
  isl::val count = isl::manage(isl_set_count_val(set.get()));
  if (count.is_null() || !count.is_int())
    return std::nullopt;
  return count.get_num_si();
}

isl::schedule sequence(const isl::schedule &first, const isl::schedule &second) {
  return checked(isl::manage(isl_schedule_sequence(first.copy(), second.copy())), first.ctx().get());
}

isl::schedule insertBand(const isl::schedule &schedule, const isl::multi_union_pw_aff &partial,
                         const std::vector<bool> &coincident, bool permutable) {
  isl::schedule withBand = checked(
      isl::manage(isl_schedule_insert_partial_schedule(schedule.copy(), partial.copy())), schedule.ctx().get());
  isl::schedule_node node = withBand.root().child(0);
  auto band = node.as<isl::schedule_node_band>();
  for (unsigned i = 0; i < coincident.size(); ++i)
    band = band.member_set_coincident(static_cast<int>(i), coincident[i]);
  band = band.set_permutable(permutable);
  return band.schedule();
}

std::string scheduleToString(const isl::schedule &schedule, bool block) {
  isl_printer *p = isl_printer_to_str(schedule.ctx().get());
  p = isl_printer_set_yaml_style(p, block ? ISL_YAML_STYLE_BLOCK : ISL_YAML_STYLE_FLOW);
  p = isl_printer_print_schedule(p, schedule.get());
  char *text = isl_printer_get_str(p);
  isl_printer_free(p);
  std::string result = text ? text : "";
  free(text);
  return result;
}

std::optional<int64_t> constantValue(const isl::pw_aff &value) {
  std::optional<int64_t> result;
  bool ok = true;
  value.foreach_piece([&](isl::set, isl::multi_aff piece) {
    isl::aff aff = piece.at(0);
    if (!aff.is_cst()) {
      ok = false;
      return;
    }
    isl::val v = aff.constant_val();
    if (!v.is_int()) {
      ok = false;
      return;
    }
    int64_t n = v.get_num_si();
    if (result && *result != n)
      ok = false;
    result = n;
  });
  if (!ok)
    return std::nullopt;
  return result;
}

std::optional<std::pair<int64_t, int64_t>> indexDistances(const isl::map &access, unsigned statementDim,
                                                          unsigned arrayDim, const isl::set &context) {
  isl::map pairs = access.intersect_params(context);
  unsigned in = tupleDims(pairs.domain().space()), out = tupleDims(pairs.range().space());
  isl_map *kept = isl_map_project_out(pairs.release(), isl_dim_in, statementDim + 1, in - statementDim - 1);
  kept = isl_map_project_out(kept, isl_dim_in, 0, statementDim);
  kept = isl_map_project_out(kept, isl_dim_out, arrayDim + 1, out - arrayDim - 1);
  kept = isl_map_project_out(kept, isl_dim_out, 0, arrayDim);
  kept = isl_map_reset_tuple_id(isl_map_reset_tuple_id(kept, isl_dim_in), isl_dim_out);
  pairs = isl::manage(kept);
  isl::set distances = pairs.deltas();
  if (distances.is_empty())
    return std::make_pair(int64_t(0), int64_t(0));
  isl::val least = distances.dim_min_val(0), greatest = distances.dim_max_val(0);
  if (!least.is_int() || !greatest.is_int())
    return std::nullopt;
  return std::make_pair(least.get_num_si(), greatest.get_num_si());
}

static int64_t valToInt(isl_val *raw) {
  isl::val v = isl::manage(raw);
  return v.get_num_si();
}

AffCoefficients coefficients(const isl::aff &aff) {
  AffCoefficients c;
  isl_aff *raw = aff.get();
  isl::val den = isl::manage(isl_aff_get_denominator_val(raw));
  c.integral = den.is_one() && isl_aff_dim(raw, isl_dim_div) == 0;
  int nIn = isl_aff_dim(raw, isl_dim_in), nParam = isl_aff_dim(raw, isl_dim_param);
  for (int i = 0; i < nIn; ++i)
    c.dims.push_back(valToInt(isl_aff_get_coefficient_val(raw, isl_dim_in, i)));
  for (int i = 0; i < nParam; ++i)
    c.params.push_back(valToInt(isl_aff_get_coefficient_val(raw, isl_dim_param, i)));
  c.constant = valToInt(isl_aff_get_constant_val(raw));
  return c;
}

static void appendTerm(std::ostringstream &os, bool &first, int64_t coefficient, const std::string &name) {
  if (coefficient == 0)
    return;
  int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
  if (first)
    os << (coefficient < 0 ? "-" : "");
  else
    os << (coefficient < 0 ? " - " : " + ");
  first = false;
  if (name.empty()) {
    os << magnitude;
    return;
  }
  if (magnitude != 1)
    os << magnitude << "*";
  os << name;
}

std::string affToString(const isl::aff &aff) {
  AffCoefficients c = coefficients(aff);
  if (!c.integral) {
    std::ostringstream os;
    os << aff;
    return os.str();
  }
  std::ostringstream os;
  bool first = true;
  isl_aff *raw = aff.get();
  for (unsigned i = 0; i < c.dims.size(); ++i) {
    const char *name = isl_aff_get_dim_name(raw, isl_dim_in, i);
    appendTerm(os, first, c.dims[i], name ? name : "x" + std::to_string(i));
  }
  for (unsigned i = 0; i < c.params.size(); ++i) {
    const char *name = isl_aff_get_dim_name(raw, isl_dim_param, i);
    appendTerm(os, first, c.params[i], name ? name : "p" + std::to_string(i));
  }
  appendTerm(os, first, c.constant, "");
  if (first)
    return "0";
  return os.str();
}

// C text of an expression of isl's AST over params: only the operations a piecewise affine function of
// params can produce. Every operand of an operator is parenthesised unless it is a name or a number.
static std::string astToC(const isl::ast_expr &e) {
  if (e.isa<isl::ast_expr_int>())
    return std::to_string(e.as<isl::ast_expr_int>().val().get_num_si());
  if (e.isa<isl::ast_expr_id>())
    return e.as<isl::ast_expr_id>().id().name();
  isl::ast_expr_op op = e.as<isl::ast_expr_op>();
  auto arg = [&](unsigned i) {
    std::string text = astToC(op.arg(i));
    return op.arg(i).isa<isl::ast_expr_op>() ? "(" + text + ")" : text;
  };
  auto binary = [&](const char *symbol) { return arg(0) + " " + symbol + " " + arg(1); };
  switch (isl_ast_expr_op_get_type(op.get())) {
  case isl_ast_expr_op_and:
  case isl_ast_expr_op_and_then:
    return binary("&&");
  case isl_ast_expr_op_or:
  case isl_ast_expr_op_or_else:
    return binary("||");
  case isl_ast_expr_op_max:
  case isl_ast_expr_op_min: {
    // Folded left: max(a, b, c) = max(max(a, b), c), each as a conditional (no library call in C).
    bool isMax = isl_ast_expr_op_get_type(op.get()) == isl_ast_expr_op_max;
    std::string acc = arg(0);
    for (unsigned i = 1; i < op.n_arg(); ++i) {
      std::string next = arg(i);
      acc = "((" + acc + ") " + (isMax ? ">" : "<") + " (" + next + ") ? (" + acc + ") : (" + next + "))";
    }
    return acc;
  }
  case isl_ast_expr_op_minus:
    return "-" + arg(0);
  case isl_ast_expr_op_add:
    return binary("+");
  case isl_ast_expr_op_sub:
    return binary("-");
  case isl_ast_expr_op_mul:
    return binary("*");
  case isl_ast_expr_op_div:    // exact
  case isl_ast_expr_op_pdiv_q: // non-negative dividend
    return binary("/");
  case isl_ast_expr_op_fdiv_q: { // floor division by a positive constant
    std::string a = arg(0), b = arg(1);
    return "((" + a + ") >= 0 ? (" + a + ") / " + b + " : -((-(" + a + ") + " + b + " - 1) / " + b + "))";
  }
  case isl_ast_expr_op_pdiv_r:
  case isl_ast_expr_op_zdiv_r:
    return binary("%");
  case isl_ast_expr_op_cond:
  case isl_ast_expr_op_select:
    return arg(0) + " ? " + arg(1) + " : " + arg(2);
  case isl_ast_expr_op_eq:
    return binary("==");
  case isl_ast_expr_op_le:
    return binary("<=");
  case isl_ast_expr_op_lt:
    return binary("<");
  case isl_ast_expr_op_ge:
    return binary(">=");
  case isl_ast_expr_op_gt:
    return binary(">");
  default:
    isl::exception::throw_error(isl_error_unsupported, "a parameter expression with an operation C cannot print",
                                __FILE__, __LINE__);
    return "";
  }
}

std::string pwAffToC(const isl::pw_aff &value, const isl::set &context) {
  isl::pw_aff simplified = value.gist_params(context).coalesce();
  std::vector<isl::aff> pieces;
  simplified.foreach_piece([&](isl::set, isl::multi_aff piece) { pieces.push_back(piece.at(0)); });
  if (pieces.size() == 1 && coefficients(pieces[0]).integral)
    return affToString(pieces[0]);
  // Several pieces (k in 0..D where k < 2 has min(D, 2) terms): isl's AST generator writes the
  // selection of the piece as conditionals over the params. Where the value is not defined (the extent
  // of a set empty for those params) it is 0: the generator cannot print a value void somewhere.
  isl::set undefined = context.params().subtract(simplified.domain());
  if (!undefined.is_empty())
    simplified = simplified
                     .union_add(isl::manage(isl_pw_aff_val_on_domain(undefined.release(),
                                                                     isl_val_zero(context.ctx().get()))))
                     .coalesce();
  isl::ast_build build = isl::ast_build::from_context(context.params());
  isl::ast_expr expr = build.expr_from(simplified);
  // A conditional is parenthesised: the text goes into larger expressions ("... > 1 ? ...").
  isl_ast_expr_op_type op = isl_ast_expr_op_get_type(expr.get());
  bool conditional = op == isl_ast_expr_op_cond || op == isl_ast_expr_op_select;
  return conditional ? "(" + astToC(expr) + ")" : astToC(expr);
}

std::vector<std::optional<int64_t>> fixedParams(const isl::set &context) {
  unsigned n = isl_set_dim(context.get(), isl_dim_param);
  std::vector<std::optional<int64_t>> values(n);
  for (unsigned i = 0; i < n; ++i) {
    isl::val v = isl::manage(isl_set_plain_get_val_if_fixed(context.get(), isl_dim_param, i));
    if (!v.is_null() && v.is_int())
      values[i] = v.get_num_si();
  }
  return values;
}

} // namespace polyc::islutil
