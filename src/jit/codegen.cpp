// SPDX-License-Identifier: Apache-2.0
#include "streampipe/jit/codegen.hpp"

#include "streampipe/jit/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace streampipe::jit::codegen {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_top_level(const std::string& list) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string current;
  for (const char c : list) {
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  parts.push_back(current);
  return parts;
}

// Splits a declaration into identifier tokens and the punctuation '*' and '&'.
std::vector<std::string> tokens_of(const std::string& decl) {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < decl.size();) {
    const char c = decl[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ident_char(c)) {
      std::size_t j = i;
      while (j < decl.size() && (ident_char(decl[j]) || decl[j] == ':')) ++j;
      tokens.push_back(decl.substr(i, j - i));
      i = j;
    } else {
      tokens.emplace_back(1, c);
      ++i;
    }
  }
  return tokens;
}

const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = {
      "i", "n", "auto", "bool", "break", "case", "char", "class", "const", "continue", "default",
      "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "int", "long",
      "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template",
      "this", "typedef", "union", "unsigned", "void", "volatile", "while", "new", "delete"};
  return words;
}

bool power_of_two(std::size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

bool is_identifier(const std::string& s) {
  return !s.empty() && ident_start(s[0]) && std::all_of(s.begin(), s.end(), ident_char);
}

TypeInfo type_info(const std::string& type) {
  using K = ScalarKind;
  static const std::map<std::string, TypeInfo> table = {
      {"float", {4, K::floating}}, {"double", {8, K::floating}},
      {"__half", {2, K::other}}, {"half", {2, K::other}}, {"__nv_bfloat16", {2, K::other}},
      {"bool", {1, K::other}},
      {"char", {1, K::signed_integer}}, {"signed char", {1, K::signed_integer}},
      {"short", {2, K::signed_integer}}, {"short int", {2, K::signed_integer}},
      {"int", {4, K::signed_integer}}, {"signed", {4, K::signed_integer}}, {"signed int", {4, K::signed_integer}},
      {"long", {8, K::signed_integer}}, {"long int", {8, K::signed_integer}},
      {"long long", {8, K::signed_integer}}, {"long long int", {8, K::signed_integer}},
      {"int8_t", {1, K::signed_integer}}, {"int16_t", {2, K::signed_integer}},
      {"int32_t", {4, K::signed_integer}}, {"int64_t", {8, K::signed_integer}},
      {"ptrdiff_t", {8, K::signed_integer}},
      {"unsigned char", {1, K::unsigned_integer}}, {"unsigned short", {2, K::unsigned_integer}},
      {"unsigned short int", {2, K::unsigned_integer}},
      {"unsigned", {4, K::unsigned_integer}}, {"unsigned int", {4, K::unsigned_integer}},
      {"unsigned long", {8, K::unsigned_integer}}, {"unsigned long int", {8, K::unsigned_integer}},
      {"unsigned long long", {8, K::unsigned_integer}}, {"unsigned long long int", {8, K::unsigned_integer}},
      {"uint8_t", {1, K::unsigned_integer}}, {"uint16_t", {2, K::unsigned_integer}},
      {"uint32_t", {4, K::unsigned_integer}}, {"uint64_t", {8, K::unsigned_integer}},
      {"size_t", {8, K::unsigned_integer}},
      {"char2", {2, K::other}}, {"uchar2", {2, K::other}}, {"char4", {4, K::other}}, {"uchar4", {4, K::other}},
      {"short2", {4, K::other}}, {"ushort2", {4, K::other}}, {"short4", {8, K::other}}, {"ushort4", {8, K::other}},
      {"int2", {8, K::other}}, {"uint2", {8, K::other}}, {"int4", {16, K::other}}, {"uint4", {16, K::other}},
      {"float2", {8, K::other}}, {"float4", {16, K::other}}, {"double2", {16, K::other}},
      {"longlong2", {16, K::other}}, {"ulonglong2", {16, K::other}}, {"__half2", {4, K::other}},
      {"float3", {12, K::other}}, {"int3", {12, K::other}}, {"uchar3", {3, K::other}}};
  const auto it = table.find(type);
  return it == table.end() ? TypeInfo{} : it->second;
}

std::string Param::declaration() const {
  if (!is_pointer) return fmt::format("{} {}", type, name);
  return fmt::format("{}{}* {}", is_const ? "const " : "", type, name);
}

std::vector<Param> parse_params(const std::string& list) {
  std::vector<Param> params;
  std::set<std::string> names;
  if (trim(list).empty()) throw JitError("empty parameter list: name at least one array or scalar");
  for (const std::string& raw : split_top_level(list)) {
    const std::string decl = trim(raw);
    if (decl.empty()) throw JitError(fmt::format("empty parameter in '{}'", list));
    auto tokens = tokens_of(decl);
    if (tokens.size() < 2 || !is_identifier(tokens.back()))
      throw JitError(fmt::format("parameter '{}' needs a type and a name", decl));
    Param p;
    p.name = tokens.back();
    tokens.pop_back();
    int stars = 0;
    bool const_before_star = false;
    std::vector<std::string> type_words;
    for (const auto& t : tokens) {
      if (t == "*") {
        ++stars;
      } else if (t == "&") {
        throw JitError(fmt::format("parameter '{}': references are not kernel parameters", decl));
      } else if (t == "const") {
        if (stars == 0) const_before_star = true;
      } else if (t == "__restrict__" || t == "__restrict" || t == "volatile") {
        // qualifiers of the pointer itself: irrelevant to the generated code
      } else if (is_identifier(t) || t.find("::") != std::string::npos) {
        type_words.push_back(t);
      } else {
        throw JitError(fmt::format("parameter '{}': unexpected '{}'", decl, t));
      }
    }
    if (stars > 1) throw JitError(fmt::format("parameter '{}': pointers to pointers are not supported", decl));
    if (type_words.empty()) throw JitError(fmt::format("parameter '{}' has no type", decl));
    std::string type;
    for (const auto& w : type_words) type += (type.empty() ? "" : " ") + w;
    p.type = type;
    p.is_pointer = stars == 1;
    p.is_const = p.is_pointer && const_before_star;
    p.info = type_info(type);
    if (reserved_words().count(p.name) || p.name.rfind("sp_", 0) == 0)
      throw JitError(fmt::format("parameter '{}': the name '{}' is reserved ('i' is the index, 'n' the size, "
                                 "'sp_' prefixes generated names)",
                                 decl, p.name));
    if (!names.insert(p.name).second) throw JitError(fmt::format("parameter name '{}' appears twice", p.name));
    params.push_back(std::move(p));
  }
  return params;
}

VectorPlan plan_vectorization(const std::vector<Param>& params, const std::string& expression) {
  VectorPlan plan;
  plan.uses.resize(params.size());
  std::map<std::string, std::size_t> arrays;
  std::size_t smallest = 16;
  for (std::size_t p = 0; p < params.size(); ++p) {
    if (!params[p].is_pointer) continue;
    const std::size_t size = params[p].info.size;
    if (size == 0 || !power_of_two(size) || size > 16) {
      plan.reason = fmt::format("array '{}' has element type '{}' of {} size", params[p].name, params[p].type,
                                size == 0 ? "unknown" : "non-power-of-two");
      return plan;
    }
    smallest = std::min(smallest, size);
    arrays.emplace(params[p].name, p);
  }
  if (arrays.empty()) {
    plan.reason = "no arrays";
    return plan;
  }
  // An array assigned unconditionally at the start of a statement need not be loaded; one
  // assigned under a condition must be, or the elements not assigned would be garbage.
  bool branchy = expression.find('?') != std::string::npos || expression.find("&&") != std::string::npos ||
                 expression.find("||") != std::string::npos;
  for (std::size_t pos = 0; pos < expression.size() && !branchy;) {
    if (!ident_start(expression[pos])) {
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < expression.size() && ident_char(expression[end])) ++end;
    static const std::set<std::string> control = {"if", "else", "for", "while", "do", "switch",
                                                  "case", "return", "goto", "break", "continue"};
    branchy = control.count(expression.substr(pos, end - pos)) > 0;
    pos = end;
  }
  std::string out;
  const std::string& e = expression;
  for (std::size_t pos = 0; pos < e.size();) {
    const char c = e[pos];
    if (c == '"' || c == '\'') {  // literals pass through untouched
      std::size_t j = pos + 1;
      while (j < e.size() && e[j] != c) j += e[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, e.size());
      out += e.substr(pos, j - pos);
      pos = j;
      continue;
    }
    if (!ident_start(c) || (pos > 0 && ident_char(e[pos - 1]))) {
      out.push_back(c);
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < e.size() && ident_char(e[end])) ++end;
    const std::string word = e.substr(pos, end - pos);
    const auto it = arrays.find(word);
    // Members (s.a, p->a) and qualified names (ns::a) are not the parameter.
    std::size_t before = pos;
    while (before > 0 && std::isspace(static_cast<unsigned char>(e[before - 1]))) --before;
    const bool member = before > 0 && (e[before - 1] == '.' || (e[before - 1] == '>' && before > 1 && e[before - 2] == '-') ||
                                       (e[before - 1] == ':' && before > 1 && e[before - 2] == ':'));
    if (it == arrays.end() || member) {
      out += word;
      pos = end;
      continue;
    }
    // Must be exactly  name [ i ]
    std::size_t j = end;
    const auto skip = [&] {
      while (j < e.size() && std::isspace(static_cast<unsigned char>(e[j]))) ++j;
    };
    skip();
    bool ok = j < e.size() && e[j] == '[';
    if (ok) {
      ++j;
      skip();
      ok = j < e.size() && e[j] == 'i' && (j + 1 >= e.size() || !ident_char(e[j + 1]));
      if (ok) {
        ++j;
        skip();
        ok = j < e.size() && e[j] == ']';
      }
    }
    if (!ok) {
      plan.reason = fmt::format("array '{}' is used other than as {}[i]", word, word);
      return plan;
    }
    ++j;  // past ']'
    std::size_t k = j;
    while (k < e.size() && std::isspace(static_cast<unsigned char>(e[k]))) ++k;
    const std::string_view rest = std::string_view(e).substr(k);
    const bool prefix_incdec = before >= 2 && ((e[before - 1] == '+' && e[before - 2] == '+') ||
                                               (e[before - 1] == '-' && e[before - 2] == '-'));
    ArrayUse& use = plan.uses[it->second];
    const bool plain_assign = rest.size() >= 1 && rest[0] == '=' && (rest.size() < 2 || rest[1] != '=');
    bool compound = prefix_incdec || rest.starts_with("++") || rest.starts_with("--") || rest.starts_with("<<=") ||
                    rest.starts_with(">>=");
    for (const char* op : {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="})
      if (rest.starts_with(op)) compound = true;
    const bool statement_start = before == 0 || e[before - 1] == ';' || e[before - 1] == '{' || e[before - 1] == '}';
    if (plain_assign && !branchy && statement_start) {
      use.written = true;
    } else if (plain_assign) {
      use.written = true;
      use.read = true;
    } else if (compound) {
      use.written = true;
      use.read = true;
    } else {
      use.read = true;
    }
    out += fmt::format("sp_v_{}.e[sp_k]", word);
    pos = j;
  }
  for (std::size_t p = 0; p < params.size(); ++p)
    if (plan.uses[p].written && params[p].is_const) {
      plan.reason = fmt::format("array '{}' is const but written", params[p].name);
      return plan;
    }
  plan.possible = true;
  plan.elements = static_cast<unsigned>(16 / smallest);
  plan.rewritten = std::move(out);
  return plan;
}

std::string vector_step(const std::vector<Param>& params, const VectorPlan& plan, const std::string& body) {
  std::string s = "    {\n";
  const unsigned e = plan.elements;
  for (std::size_t p = 0; p < params.size(); ++p) {
    const ArrayUse& u = plan.uses[p];
    if (!params[p].is_pointer || (!u.read && !u.written)) continue;
    const Param& a = params[p];
    const std::size_t chunks = e * a.info.size / 16;
    // A union, not a cast of a local array: the elements and the 16-byte chunks alias legally.
    s += fmt::format("      union {{ uint4 u[{}]; {} e[{}]; }} sp_v_{};\n", chunks, a.type, e, a.name);
    if (u.read)
      s += fmt::format(
          "#pragma unroll\n"
          "      for (int sp_j = 0; sp_j < {}; ++sp_j) sp_v_{}.u[sp_j] = reinterpret_cast<const uint4*>({} + sp_base)[sp_j];\n",
          chunks, a.name, a.name);
  }
  s += fmt::format(
      "#pragma unroll\n"
      "      for (int sp_k = 0; sp_k < {}; ++sp_k) {{\n"
      "        const unsigned long long i = sp_base + sp_k;\n"
      "        (void)i;\n"
      "        {}\n"
      "      }}\n",
      e, body);
  for (std::size_t p = 0; p < params.size(); ++p) {
    const Param& a = params[p];
    if (!a.is_pointer || !plan.uses[p].written) continue;
    s += fmt::format(
        "#pragma unroll\n"
        "      for (int sp_j = 0; sp_j < {}; ++sp_j)\n"
        "        reinterpret_cast<uint4*>({} + sp_base)[sp_j] = sp_v_{}.u[sp_j];\n",
        e * a.info.size / 16, a.name, a.name);
  }
  s += "    }\n";
  return s;
}

}  // namespace streampipe::jit::codegen
