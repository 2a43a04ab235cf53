// docs/config.schema.json is documentation that editors and CI validators use; these tests keep
// it in step with what the loader actually accepts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "config/enums.h"
#include "config/json_reader.h"
#include "config/to_json.h"

namespace cordon::config {
namespace {

// ordered_json keeps the schema's key order, which the tests compare with the reader's.
using Json = nlohmann::ordered_json;

Json LoadSchema() {
  std::ifstream in(CORDON_CONFIG_SCHEMA_PATH);
  EXPECT_TRUE(in.good()) << "cannot open " << CORDON_CONFIG_SCHEMA_PATH;
  return Json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Every key pointer under "properties", depth first, in file order.
void CollectKeys(const Json& node, const std::string& pointer, std::vector<std::string>& out) {
  if (!node.contains("properties")) return;
  for (const auto& [key, child] : node["properties"].items()) {
    out.push_back(pointer + "/" + key);
    CollectKeys(child, pointer + "/" + key, out);
  }
}

const Json& PropertyAt(const Json& schema, const std::string& pointer) {
  const Json* node = &schema;
  std::size_t start = 1;
  while (start <= pointer.size()) {
    std::size_t end = pointer.find('/', start);
    if (end == std::string::npos) end = pointer.size();
    node = &(*node)["properties"][pointer.substr(start, end - start)];
    start = end + 1;
  }
  return *node;
}

TEST(ConfigSchema, IsDraft202012) {
  Json schema = LoadSchema();
  ASSERT_FALSE(schema.is_discarded()) << "the schema is not valid JSON";
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
}

TEST(ConfigSchema, ListsExactlyTheKeysTheLoaderAccepts) {
  Json schema = LoadSchema();
  ASSERT_FALSE(schema.is_discarded());
  std::vector<std::string> documented;
  CollectKeys(schema, "", documented);
  std::vector<std::string> accepted = AcceptedKeyPointers();
  EXPECT_EQ(std::set<std::string>(documented.begin(), documented.end()),
            std::set<std::string>(accepted.begin(), accepted.end()));
  // Same order too: the schema reads in the order ToJson writes.
  EXPECT_EQ(documented, accepted);
}

TEST(ConfigSchema, EveryObjectWithPropertiesRefusesOtherKeys) {
  Json schema = LoadSchema();
  ASSERT_FALSE(schema.is_discarded());
  std::vector<std::string> pointers = {""};
  CollectKeys(schema, "", pointers);
  for (const std::string& pointer : pointers) {
    const Json& node = pointer.empty() ? schema : PropertyAt(schema, pointer);
    if (!node.contains("properties")) continue;
    EXPECT_EQ(node.value("additionalProperties", Json(true)), false) << pointer;
  }
}

TEST(ConfigSchema, EnumsMatchTheParsers) {
  Json schema = LoadSchema();
  ASSERT_FALSE(schema.is_discarded());
  auto names = [](auto array) { return std::vector<std::string>(array.begin(), array.end()); };
  EXPECT_EQ(PropertyAt(schema, "/sandbox/mode")["enum"].get<std::vector<std::string>>(),
            names(kSandboxModeNames));
  EXPECT_EQ(PropertyAt(schema, "/sandbox/network")["enum"].get<std::vector<std::string>>(),
            names(kNetworkPolicyNames));
  EXPECT_EQ(PropertyAt(schema, "/sandbox/backend")["enum"].get<std::vector<std::string>>(),
            names(kBackendChoiceNames));
}

TEST(ConfigSchema, DefaultsMatchTheDefaultConfig) {
  Json schema = LoadSchema();
  ASSERT_FALSE(schema.is_discarded());
  Json defaults = Json::parse(ToJson(Config{}));
  for (const std::string& pointer : AcceptedKeyPointers()) {
    const Json& node = PropertyAt(schema, pointer);
    if (node.contains("properties")) continue;  // a section
    ASSERT_TRUE(node.contains("default")) << pointer << " has no default in the schema";
    EXPECT_EQ(node["default"], defaults.at(Json::json_pointer(pointer))) << pointer;
  }
}

}  // namespace
}  // namespace cordon::config
