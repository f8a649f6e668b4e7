// Look-alike letters: the fold that makes "pаypal" (a Cyrillic а), "bìtcòìn" or "ƒree" the ASCII
// word it imitates, when TokenizerOptions::fold_lookalikes is on (step 4a of
// tokenizer/tokenizer.h).
//
// Each code point from U+0080 to U+2FFF that is a letter, a digit or a combining mark has a fold
// computed once from ICU: a combining mark folds to nothing; a letter or digit folds to the one
// ASCII letter or digit left after its canonical decomposition loses its marks ("ì" -> "i"),
// else after the same of its UTS #39 confusable skeleton (Cyrillic "а" -> "a", Greek "ο" -> "o",
// Latin "ƒ" -> "f"), lower-cased; anything else has no fold. A word is folded only when it holds
// an ASCII letter and every one of its other code points has a fold: a disguised word becomes the
// word, while words wholly in another script ("море") and words with a character that imitates
// nothing keep their own token. Words are folded after NFKC_Casefold, which has already removed
// invisible (default-ignorable) characters and mapped fullwidth and mathematical letters.
//
//   std::string word = "b\xc3\xactc\xc3\xb2\xc3\xacn";  // "bìtcòìn"
//   FoldLookalikes(word, 0);                           // true; word == "bitcoin"
//
// Thread-safe: the fold table is built once, on first use, and then only read.
#ifndef NBSPAMD_TOKENIZER_LOOKALIKES_H_
#define NBSPAMD_TOKENIZER_LOOKALIKES_H_

#include <cstddef>
#include <string>

namespace nbspamd::tokenizer {

// Folds the UTF-8 word text[from..] in place as above; returns whether it changed. Text that is
// not well-formed UTF-8 is left as it is.
bool FoldLookalikes(std::string& text, std::size_t from);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_LOOKALIKES_H_
