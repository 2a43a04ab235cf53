#include "config/json_document.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "config/diagnostics.h"

namespace cordon::config {
namespace {

// Follows the parser's callback events to know the JSON pointer of the value being read, and
// records the first key that repeats within one object.
class DuplicateKeyFinder {
 public:
  bool OnEvent(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
        frames_.push_back(Frame{.is_object = true});
        break;
      case Event::array_start:
        frames_.push_back(Frame{.is_object = false});
        break;
      case Event::key:
        OnKey(parsed.get_ref<const std::string&>());
        break;
      case Event::value:
        ElementDone();
        break;
      case Event::object_end:
      case Event::array_end:
        if (!frames_.empty()) frames_.pop_back();
        ElementDone();
        break;
    }
    return true;  // keep every value; this pass only observes
  }

  bool found() const { return found_; }
  const std::string& first_duplicate_pointer() const { return duplicate_pointer_; }
  const std::string& first_duplicate_key() const { return duplicate_key_; }

 private:
  struct Frame {
    bool is_object = true;
    std::set<std::string> keys;
    std::string current_key;
    std::size_t index = 0;
  };

  void OnKey(const std::string& key) {
    if (frames_.empty() || !frames_.back().is_object) return;
    Frame& frame = frames_.back();
    frame.current_key = key;
    if (!frame.keys.insert(key).second && !found_) {
      found_ = true;
      duplicate_key_ = key;
      duplicate_pointer_ = PointerOfParent();
    }
  }

  // A value (scalar or container) finished: in an array, the next one has the next index.
  void ElementDone() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().index;
  }

  // The pointer of the object that holds the key being read.
  std::string PointerOfParent() const {
    std::string pointer;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      pointer = frame.is_object ? PointerAppend(pointer, frame.current_key)
                                : PointerAppend(pointer, frame.index);
    }
    return pointer;
  }

  std::vector<Frame> frames_;
  bool found_ = false;
  std::string duplicate_key_;
  std::string duplicate_pointer_;
};

// nlohmann reports a byte count; people want line and column (1-based, column in bytes).
std::pair<std::size_t, std::size_t> LineAndColumn(std::string_view text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 1;
  std::size_t end = std::min(text.size(), byte == 0 ? 0 : byte - 1);
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while parsing
// object - unexpected ..." -> "syntax error while parsing object - unexpected ...". The position
// is reported separately, in the same form as compilers do.
std::string StripParseErrorPrefix(std::string_view what) {
  if (std::size_t bracket = what.find("] ");
      what.starts_with("[json.") && bracket != std::string_view::npos) {
    what.remove_prefix(bracket + 2);
  }
  if (what.starts_with("parse error")) {
    if (std::size_t colon = what.find(": "); colon != std::string_view::npos) {
      what.remove_prefix(colon + 2);
    }
  }
  return std::string(what);
}

}  // namespace

Result<nlohmann::json> ParseJsonDocument(std::string_view text, std::string_view source) {
  if (text.size() > kMaxConfigBytes) {
    return FailConfig(source, "",
                      fmt::format("the file is {} bytes; a config larger than {} bytes is refused",
                                  text.size(), kMaxConfigBytes));
  }
  DuplicateKeyFinder finder;
  nlohmann::json::parser_callback_t callback =
      [&finder](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        return finder.OnEvent(event, parsed);
      };
  nlohmann::json document;
  // nlohmann's parser throws; this is the adapter that turns its exceptions into Results.
  try {
    document = nlohmann::json::parse(text.begin(), text.end(), callback,
                                     /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& error) {
    auto [line, column] = LineAndColumn(text, error.byte);
    return FailConfig(fmt::format("{}:{}:{}", source, line, column), "",
                      fmt::format("invalid JSON: {}", StripParseErrorPrefix(error.what())));
  } catch (const nlohmann::json::exception& error) {
    return FailConfig(source, "",
                      fmt::format("invalid JSON: {}", StripParseErrorPrefix(error.what())));
  }
  if (finder.found()) {
    return FailConfig(source, finder.first_duplicate_pointer(),
                      fmt::format("key {} appears more than once in this object",
                                  Quote(finder.first_duplicate_key())));
  }
  return document;
}

}  // namespace cordon::config
