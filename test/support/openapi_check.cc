#include "support/openapi_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>

namespace corral::testing_support {

using nlohmann::json;

namespace {

// $ref chains longer than this are taken for a cycle.
constexpr int kMaxRefDepth = 64;

const std::set<std::string>& knownKeywords() {
  static const std::set<std::string> k = {
      // Checked.
      "type", "nullable", "properties", "required", "additionalProperties", "items", "enum", "$ref",
      "oneOf", "anyOf", "allOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
      "minLength", "maxLength", "minItems", "maxItems", "pattern", "minProperties", "maxProperties",
      // Annotations, ignored.
      "format", "description", "title", "example", "default", "readOnly", "writeOnly", "deprecated",
      "externalDocs", "xml", "discriminator"};
  return k;
}

std::string typeOf(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "other";
  }
}

std::string brief(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

// Whether `schema[key]` is `true` (anything else, absent included, is false).
bool flag(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

bool isInteger(const json& v) {
  if (v.is_number_integer()) return true;  // Signed or unsigned.
  if (v.is_number_float()) {
    double d = v.get<double>();
    return std::isfinite(d) && std::trunc(d) == d;
  }
  return false;
}

bool hasType(const json& v, const std::string& type) {
  if (type == "integer") return isInteger(v);
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return false;
}

// Resolves a local JSON pointer ("#/components/schemas/X").
const json* resolve(const json& doc, const std::string& ref) {
  if (ref.rfind("#", 0) != 0) return nullptr;
  std::string pointer = ref.substr(1);
  try {
    json::json_pointer p(pointer);
    if (!doc.contains(p)) return nullptr;
    return &doc.at(p);
  } catch (const json::exception&) {
    return nullptr;
  }
}

class Checker {
 public:
  explicit Checker(const json& doc) : doc_(doc) {}

  void check(const json& schema, const json& value, const std::string& path, int depth) {
    if (depth > kMaxRefDepth) return fail(path, "schema nests too deeply (a $ref cycle?)");
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(path, "no value is allowed here");
      return;
    }
    if (!schema.is_object()) return fail(path, "schema is not an object: " + brief(schema));
    if (auto ref = schema.find("$ref"); ref != schema.end()) {
      if (!ref->is_string()) return fail(path, "$ref is not a string");
      const json* target = resolve(doc_, ref->get<std::string>());
      if (target == nullptr) return fail(path, "unresolved $ref " + ref->get<std::string>());
      return check(*target, value, path, depth + 1);
    }

    if (value.is_null()) {
      // OpenAPI 3.0: null is allowed only with `nullable: true` (or no type).
      if (flag(schema, "nullable")) return;
      if (schema.contains("type")) return fail(path, "is null, expected " + typeName(schema));
    }

    if (auto t = schema.find("type"); t != schema.end()) {
      if (!t->is_string()) return fail(path, "schema's type is not a string");
      if (!hasType(value, t->get<std::string>()))
        return fail(path, "expected " + t->get<std::string>() + ", got " + typeOf(value) + " " +
                              brief(value));
    }

    if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
      bool found = std::any_of(e->begin(), e->end(), [&](const json& c) { return c == value; });
      if (!found) fail(path, brief(value) + " is not one of " + brief(*e));
    }

    if (value.is_number()) checkNumber(schema, value, path);
    if (value.is_string()) checkString(schema, value.get_ref<const std::string&>(), path);
    if (value.is_array()) checkArray(schema, value, path, depth);
    if (value.is_object()) checkObject(schema, value, path, depth);

    if (auto all = schema.find("allOf"); all != schema.end() && all->is_array())
      for (const auto& s : *all) check(s, value, path, depth + 1);
    if (auto any = schema.find("anyOf"); any != schema.end() && any->is_array()) {
      std::vector<std::string> why;
      bool matched = false;
      for (const auto& s : *any) {
        auto errs = sub(s, value, path, depth);
        if (errs.empty()) {
          matched = true;
          break;
        }
        why.push_back(errs.front());
      }
      if (!matched) fail(path, "matches none of anyOf: " + join(why));
    }
    if (auto one = schema.find("oneOf"); one != schema.end() && one->is_array()) {
      std::vector<std::string> why;
      int matched = 0;
      for (const auto& s : *one) {
        auto errs = sub(s, value, path, depth);
        if (errs.empty())
          ++matched;
        else
          why.push_back(errs.front());
      }
      if (matched == 0) fail(path, "matches none of oneOf: " + join(why));
      if (matched > 1)
        fail(path,
             "matches " + std::to_string(matched) + " branches of oneOf, expected exactly one");
    }
  }

  std::vector<std::string> errors;

 private:
  void fail(const std::string& path, const std::string& what) {
    errors.push_back(path + ": " + what);
  }

  std::vector<std::string> sub(const json& schema, const json& value, const std::string& path,
                               int depth) {
    Checker c(doc_);
    c.check(schema, value, path, depth + 1);
    return c.errors;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "[" : "; [") + s + "]";
    return out;
  }

  static std::string typeName(const json& schema) {
    auto t = schema.find("type");
    return t != schema.end() && t->is_string() ? t->get<std::string>() : "a value";
  }

  // -1, 0 or 1 as `a` is below, at or above `b`; exact where both are
  // integers, since not every 64-bit integer fits a double.
  static int compare(const json& a, const json& b) {
    if (a.is_number_integer() && b.is_number_integer()) {
      bool au = a.is_number_unsigned(), bu = b.is_number_unsigned();
      if (au && bu)
        return a.get<uint64_t>() < b.get<uint64_t>() ? -1 : a.get<uint64_t>() > b.get<uint64_t>();
      if (!au && !bu)
        return a.get<int64_t>() < b.get<int64_t>() ? -1 : a.get<int64_t>() > b.get<int64_t>();
      // One unsigned (>= 0) and one signed.
      if (au)
        return b.get<int64_t>() < 0 || a.get<uint64_t>() > static_cast<uint64_t>(b.get<int64_t>())
                   ? 1
               : a.get<uint64_t>() == static_cast<uint64_t>(b.get<int64_t>()) ? 0
                                                                              : -1;
      return -compare(b, a);
    }
    double x = a.get<double>(), y = b.get<double>();
    return x < y ? -1 : x > y;
  }

  void checkNumber(const json& schema, const json& value, const std::string& path) {
    if (auto m = schema.find("minimum"); m != schema.end() && m->is_number()) {
      int c = compare(value, *m);
      if (c < 0 || (c == 0 && flag(schema, "exclusiveMinimum")))
        fail(path, brief(value) + " is below the minimum " + brief(*m));
    }
    if (auto m = schema.find("maximum"); m != schema.end() && m->is_number()) {
      int c = compare(value, *m);
      if (c > 0 || (c == 0 && flag(schema, "exclusiveMaximum")))
        fail(path, brief(value) + " is above the maximum " + brief(*m));
    }
  }

  static size_t utf8Length(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }

  void checkString(const json& schema, const std::string& s, const std::string& path) {
    size_t len = utf8Length(s);
    if (auto m = schema.find("minLength");
        m != schema.end() && m->is_number_unsigned() && len < m->get<size_t>())
      fail(path, "is shorter than " + m->dump() + " characters");
    if (auto m = schema.find("maxLength");
        m != schema.end() && m->is_number_unsigned() && len > m->get<size_t>())
      fail(path, "is longer than " + m->dump() + " characters");
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string()) {
      try {
        std::regex re(p->get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(s, re))
          fail(path, brief(json(s)) + " does not match the pattern " + p->get<std::string>());
      } catch (const std::regex_error&) {
        fail(path, "schema's pattern is not a valid regular expression: " + p->get<std::string>());
      }
    }
  }

  void checkArray(const json& schema, const json& value, const std::string& path, int depth) {
    if (auto m = schema.find("minItems");
        m != schema.end() && m->is_number_unsigned() && value.size() < m->get<size_t>())
      fail(path, "has " + std::to_string(value.size()) + " items, fewer than " + m->dump());
    if (auto m = schema.find("maxItems");
        m != schema.end() && m->is_number_unsigned() && value.size() > m->get<size_t>())
      fail(path, "has " + std::to_string(value.size()) + " items, more than " + m->dump());
    if (auto items = schema.find("items"); items != schema.end())
      for (size_t i = 0; i < value.size(); ++i)
        check(*items, value[i], path + "[" + std::to_string(i) + "]", depth + 1);
  }

  static std::string member(const std::string& path, const std::string& key) {
    bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '_';
    });
    return plain
               ? path + "." + key
               : path + "[" + json(key).dump(-1, ' ', false, json::error_handler_t::replace) + "]";
  }

  void checkObject(const json& schema, const json& value, const std::string& path, int depth) {
    if (auto m = schema.find("minProperties");
        m != schema.end() && m->is_number_unsigned() && value.size() < m->get<size_t>())
      fail(path, "has fewer than " + m->dump() + " members");
    if (auto m = schema.find("maxProperties");
        m != schema.end() && m->is_number_unsigned() && value.size() > m->get<size_t>())
      fail(path, "has more than " + m->dump() + " members");
    static const json kEmpty = json::object();
    auto p = schema.find("properties");
    const json& props = p != schema.end() && p->is_object() ? *p : kEmpty;
    if (auto r = schema.find("required"); r != schema.end() && r->is_array())
      for (const auto& name : *r)
        if (name.is_string() && !value.contains(name.get<std::string>()))
          fail(path, "lacks the required member \"" + name.get<std::string>() + "\"");
    auto extra = schema.find("additionalProperties");
    for (auto it = value.begin(); it != value.end(); ++it) {
      std::string at = member(path, it.key());
      if (auto s = props.find(it.key()); s != props.end()) {
        check(*s, *it, at, depth + 1);
      } else if (extra != schema.end()) {
        if (extra->is_boolean()) {
          if (!extra->get<bool>()) fail(at, "is not a documented member");
        } else {
          check(*extra, *it, at, depth + 1);
        }
      }
    }
  }

  const json& doc_;
};

std::string lowerCase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

const json* jsonContentSchema(const json& holder) {
  if (!holder.is_object()) return nullptr;
  auto content = holder.find("content");
  if (content == holder.end() || !content->is_object()) return nullptr;
  auto media = content->find("application/json");
  if (media == content->end() || !media->is_object()) return nullptr;
  auto schema = media->find("schema");
  return schema == media->end() ? nullptr : &*schema;
}

const char* const kMethods[] = {"get",     "put",  "post",  "delete",
                                "options", "head", "patch", "trace"};

// Walks every schema of the document, calling `visit(schema, where)`.
template <typename F>
void eachSchema(const json& s, const std::string& where, const F& visit) {
  if (!s.is_object()) return;
  visit(s, where);
  for (const char* k : {"items", "additionalProperties"})
    if (auto it = s.find(k); it != s.end() && it->is_object())
      eachSchema(*it, where + "/" + k, visit);
  if (auto props = s.find("properties"); props != s.end() && props->is_object())
    for (auto it = props->begin(); it != props->end(); ++it)
      eachSchema(*it, where + "/properties/" + it.key(), visit);
  for (const char* k : {"oneOf", "anyOf", "allOf"})
    if (auto it = s.find(k); it != s.end() && it->is_array())
      for (size_t i = 0; i < it->size(); ++i)
        eachSchema((*it)[i], where + "/" + k + "/" + std::to_string(i), visit);
}

}  // namespace

std::vector<std::string> checkAgainstSchema(const json& doc, const json& schema, const json& value,
                                            const std::string& path) {
  Checker c(doc);
  c.check(schema, value, path, 0);
  return c.errors;
}

std::optional<std::string> matchPath(const json& doc, const std::string& concretePath) {
  auto paths = doc.find("paths");
  if (paths == doc.end() || !paths->is_object()) return std::nullopt;
  std::string bare = concretePath.substr(0, concretePath.find('?'));
  auto want = segments(bare);
  std::optional<std::string> best;
  int bestLiterals = -1;
  for (auto it = paths->begin(); it != paths->end(); ++it) {
    auto have = segments(it.key());
    if (have.size() != want.size()) continue;
    int literals = 0;
    bool ok = true;
    for (size_t i = 0; i < have.size() && ok; ++i) {
      const std::string& h = have[i];
      if (h.size() > 2 && h.front() == '{' && h.back() == '}') {
        ok = !want[i].empty();
      } else {
        ok = h == want[i];
        ++literals;
      }
    }
    if (ok && literals > bestLiterals) {
      best = it.key();
      bestLiterals = literals;
    }
  }
  return best;
}

const json* responseSchema(const json& doc, const std::string& method,
                           const std::string& concretePath, int status) {
  auto templ = matchPath(doc, concretePath);
  if (!templ) return nullptr;
  const json& item = doc["paths"][*templ];
  auto op = item.find(lowerCase(method));
  if (op == item.end() || !op->is_object()) return nullptr;
  auto responses = op->find("responses");
  if (responses == op->end() || !responses->is_object()) return nullptr;
  std::string exact = std::to_string(status);
  std::string range = std::to_string(status / 100) + "XX";
  for (const std::string& key : {exact, range, std::string("default")}) {
    auto r = responses->find(key);
    if (r == responses->end()) continue;
    const json* resp = &*r;
    if (auto ref = resp->find("$ref"); ref != resp->end() && ref->is_string())
      resp = resolve(doc, ref->get<std::string>());
    return resp ? jsonContentSchema(*resp) : nullptr;
  }
  return nullptr;
}

const json* requestSchema(const json& doc, const std::string& method,
                          const std::string& templatedPath) {
  auto paths = doc.find("paths");
  if (paths == doc.end()) return nullptr;
  auto item = paths->find(templatedPath);
  if (item == paths->end()) return nullptr;
  auto op = item->find(lowerCase(method));
  if (op == item->end()) return nullptr;
  auto body = op->find("requestBody");
  if (body == op->end()) return nullptr;
  const json* b = &*body;
  if (auto ref = b->find("$ref"); ref != b->end() && ref->is_string())
    b = resolve(doc, ref->get<std::string>());
  return b ? jsonContentSchema(*b) : nullptr;
}

std::vector<std::pair<std::string, std::string>> operations(const json& doc) {
  std::vector<std::pair<std::string, std::string>> out;
  auto paths = doc.find("paths");
  if (paths == doc.end() || !paths->is_object()) return out;
  for (auto it = paths->begin(); it != paths->end(); ++it)
    for (const char* m : kMethods)
      if (it->contains(m)) {
        std::string upper = m;
        std::transform(upper.begin(), upper.end(), upper.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        out.emplace_back(upper, it.key());
      }
  return out;
}

std::vector<std::string> lintDocument(const json& doc) {
  std::vector<std::string> problems;
  auto visit = [&](const json& s, const std::string& where) {
    for (auto it = s.begin(); it != s.end(); ++it)
      if (!knownKeywords().count(it.key()))
        problems.push_back(where + ": unknown schema keyword \"" + it.key() + "\"");
    if (auto ref = s.find("$ref"); ref != s.end()) {
      if (!ref->is_string() || resolve(doc, ref->get<std::string>()) == nullptr)
        problems.push_back(where + ": unresolved $ref " + ref->dump());
      return;
    }
    if (auto t = s.find("type"); t != s.end()) {
      static const std::set<std::string> types = {"integer", "number", "string",
                                                  "boolean", "array",  "object"};
      if (!t->is_string() || !types.count(t->get<std::string>()))
        problems.push_back(where + ": bad type " + t->dump());
      else if (*t == "array" && !s.contains("items"))
        problems.push_back(where + ": an array without items");
    }
    auto extra = s.find("additionalProperties");
    auto props = s.find("properties");
    if (auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) {
        problems.push_back(where + ": required is not an array");
      } else if (extra != s.end() && extra->is_boolean() && !extra->get<bool>()) {
        for (const auto& name : *r)
          if (!name.is_string() || props == s.end() || !props->contains(name.get<std::string>()))
            problems.push_back(where + ": required " + name.dump() +
                               " is not among its properties");
      }
    }
  };
  if (auto schemas = doc.find("components"); schemas != doc.end() && schemas->contains("schemas"))
    for (auto it = (*schemas)["schemas"].begin(); it != (*schemas)["schemas"].end(); ++it)
      eachSchema(*it, "#/components/schemas/" + it.key(), visit);
  auto paths = doc.find("paths");
  if (paths == doc.end() || !paths->is_object()) {
    problems.push_back("the document has no paths");
    return problems;
  }
  for (auto it = paths->begin(); it != paths->end(); ++it) {
    for (const char* m : kMethods) {
      auto op = it->find(m);
      if (op == it->end()) continue;
      std::string where = std::string(m) + " " + it.key();
      auto responses = op->find("responses");
      if (responses == op->end() || !responses->is_object() || responses->empty()) {
        problems.push_back(where + ": no responses");
        continue;
      }
      for (auto r = responses->begin(); r != responses->end(); ++r) {
        if (const json* s = jsonContentSchema(*r))
          eachSchema(*s, where + " " + r.key(), visit);
        else if (!r->contains("$ref"))
          problems.push_back(where + " " + r.key() + ": no application/json schema");
      }
      if (auto body = op->find("requestBody"); body != op->end())
        if (const json* s = jsonContentSchema(*body)) eachSchema(*s, where + " request", visit);
    }
  }
  return problems;
}

}  // namespace corral::testing_support
