// JSON Schema -> GBNF grammar (grammar.h), for response_format {"type":"json_schema"} and
// llama-server's `json_schema`: constrained sampling then yields JSON that parses and
// validates. Supported: type (and lists of types), properties / required /
// additionalProperties (absent: no other properties, as llama-server), enum, const, anyOf,
// oneOf, allOf of one schema, items / prefixItems / minItems / maxItems, string minLength /
// maxLength and the formats date, time, date-time and uuid, $ref to #, #/$defs/NAME and
// #/definitions/NAME (recursion is fine; a schema that is only a reference to itself is left
// recursion, refused). Annotations (title, description, default, examples, $schema, $id,
// $comment, ...) are ignored. Any other keyword is a ApiError 400 naming it: never a
// grammar that silently allows what the schema forbids.
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace qmm::serve {

// The GBNF text of `schema` (an object or a boolean). `param` names the request field in
// errors. Bounded: nesting depth, the number of rules and the grammar's size.
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema, const std::string& param);

// Several schemas in one grammar (the arguments of each tool): add() returns the name of the
// rule that matches a schema ($ref "#" is that schema); rules() is the text of every rule
// (with the shared ones: ws, string, value, ...), to follow a root rule of the caller's.
class SchemaGrammar {
 public:
  explicit SchemaGrammar(const std::string& param);
  ~SchemaGrammar();
  std::string add(const nlohmann::ordered_json& schema);
  std::string rules() const;

 private:
  class Converter;
  std::unique_ptr<Converter> c_;
};

// `s` as a GBNF string literal (quotes, backslashes and control characters escaped).
std::string gbnf_literal(const std::string& s);

// The GBNF of any JSON object ({"type":"json_object"}).
std::string json_object_gbnf();

// The grammar a request body asks for: `grammar` (GBNF, as given), llama-server's
// `json_schema`, or `response_format` (text, json_object, json_schema); at most one of them.
// "" when none; `param` gets the field's name. ApiError 400 for a bad or unsupported one.
std::string request_grammar(const nlohmann::ordered_json& body, std::string& param);

}  // namespace qmm::serve
