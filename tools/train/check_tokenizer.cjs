// Cross-check tests/fixtures/engine/tokenizer_golden.json against a second, independent
// implementation: Hugging Face's tokenizers.js (npm @huggingface/tokenizers, pure JavaScript,
// whose pre-tokenizer uses JavaScript's own \p{L} / \p{N} regex classes).
//
//   cd /tmp/tokcheck && npm install @huggingface/tokenizers
//   node tools/train/check_tokenizer.cjs /tmp/tokcheck/node_modules/@huggingface/tokenizers \
//        assets/brown-llama/tokenizer.json tests/fixtures/engine/tokenizer_golden.json
//
// Exit code 0 when every case gives the same ids and decodes back to the text, 1 otherwise.
"use strict";
const fs = require("fs");

const [modulePath, tokenizerPath, goldenPath] = process.argv.slice(2);
if (!goldenPath) {
  console.error("usage: node check_tokenizer.cjs <@huggingface/tokenizers dir> <tokenizer.json> <golden.json>");
  process.exit(2);
}
const { Tokenizer } = require(modulePath);
const tokenizer = new Tokenizer(JSON.parse(fs.readFileSync(tokenizerPath, "utf8")), {});
const golden = JSON.parse(fs.readFileSync(goldenPath, "utf8"));

let failures = 0;
for (const c of golden.cases) {
  const ids = tokenizer.encode(c.text, { add_special_tokens: false }).ids;
  const same = ids.length === c.ids.length && ids.every((id, k) => id === c.ids[k]);
  const decoded = c.ids.length === 0 ? "" : tokenizer.decode(c.ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  if (!same || decoded !== c.text) {
    failures++;
    console.log(`MISMATCH ${JSON.stringify(c.text)}\n  golden ${JSON.stringify(c.ids)}\n  js     ${JSON.stringify(ids)}\n  decoded ${JSON.stringify(decoded)}`);
  }
}
console.log(`${golden.cases.length - failures}/${golden.cases.length} cases agree`);
process.exit(failures ? 1 : 0);
