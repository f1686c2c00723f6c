//! What a GGUF's chat template looks like, said briefly: the family its
//! turn markers belong to, where they are ones Folio recognises, and its
//! first line. The template itself is never run, only looked at.

use serde::Serialize;

/// How much of the template's first line is kept for showing.
const FIRST_LINE_CHARS: usize = 80;

/// A model's `tokenizer.chat_template`, described.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct ChatTemplate {
    /// The family of the turn markers it writes; `None` when they are none
    /// of the known ones (the first line is then the only clue).
    pub family: Option<TemplateFamily>,
    /// Its first non-blank line, shortened to 80 characters, control
    /// characters replaced.
    pub first_line: String,
    /// Its length in bytes.
    pub bytes: u64,
}

/// Chat formats named by the marker tokens only they write, so a name here
/// is read off the template, never guessed from the model's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TemplateFamily {
    /// `<|im_start|>` … `<|im_end|>` (Qwen, SmolLM, many fine-tunes).
    #[serde(rename = "chatml")]
    ChatMl,
    /// `<|start_header_id|>` (Llama 3).
    Llama3,
    /// `<start_of_turn>` (Gemma).
    Gemma,
    /// `<|user|>` … `<|end|>` (Phi-3).
    Phi3,
    /// `[INST]` … `[/INST]` (Llama 2, Mistral).
    Inst,
    /// `<|START_OF_TURN_TOKEN|>` (Command R).
    CommandR,
    /// `<｜User｜>` with full-width bars (DeepSeek V3 and R1).
    DeepSeek,
    /// `<|start_of_role|>` (Granite).
    Granite,
    /// `<|channel|>` (gpt-oss's Harmony).
    Harmony,
}

impl TemplateFamily {
    /// Each family and the markers that identify it, most specific first:
    /// a template is put in the first family all of whose markers it holds.
    const MARKERS: [(TemplateFamily, &'static [&'static str]); 9] = [
        (TemplateFamily::Llama3, &["<|start_header_id|>"]),
        (TemplateFamily::Harmony, &["<|channel|>", "<|start|>"]),
        (TemplateFamily::ChatMl, &["<|im_start|>"]),
        (TemplateFamily::Gemma, &["<start_of_turn>"]),
        (TemplateFamily::CommandR, &["<|START_OF_TURN_TOKEN|>"]),
        (TemplateFamily::Granite, &["<|start_of_role|>"]),
        (TemplateFamily::DeepSeek, &["<\u{ff5c}User\u{ff5c}>"]),
        (TemplateFamily::Phi3, &["<|user|>", "<|end|>"]),
        (TemplateFamily::Inst, &["[INST]"]),
    ];

    pub fn label(self) -> &'static str {
        match self {
            TemplateFamily::ChatMl => "ChatML",
            TemplateFamily::Llama3 => "Llama 3",
            TemplateFamily::Gemma => "Gemma",
            TemplateFamily::Phi3 => "Phi-3",
            TemplateFamily::Inst => "[INST] (Llama 2, Mistral)",
            TemplateFamily::CommandR => "Command R",
            TemplateFamily::DeepSeek => "DeepSeek",
            TemplateFamily::Granite => "Granite",
            TemplateFamily::Harmony => "Harmony (gpt-oss)",
        }
    }

    fn of(template: &str) -> Option<TemplateFamily> {
        Self::MARKERS
            .iter()
            .find(|(_, markers)| markers.iter().all(|m| template.contains(m)))
            .map(|(family, _)| *family)
    }
}

impl ChatTemplate {
    pub fn describe(template: &str) -> ChatTemplate {
        let first = template
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("");
        ChatTemplate {
            family: TemplateFamily::of(template),
            first_line: super::printable(first, FIRST_LINE_CHARS),
            bytes: template.len() as u64,
        }
    }

    /// The template in a few words: its family, else its first line.
    pub fn summary(&self) -> String {
        match self.family {
            Some(family) => family.label().to_string(),
            None => format!("{:?}", self.first_line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_read_off_their_markers() {
        let cases = [
            ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}", Some(TemplateFamily::ChatMl)),
            ("{{ '<|start_header_id|>' + role + '<|end_header_id|>' }}", Some(TemplateFamily::Llama3)),
            ("{{ bos_token }}{% if m %}[INST] {{ m }} [/INST]{% endif %}", Some(TemplateFamily::Inst)),
            ("<start_of_turn>user\n{{ x }}<end_of_turn>", Some(TemplateFamily::Gemma)),
            ("<|user|>\n{{ x }}<|end|>\n<|assistant|>", Some(TemplateFamily::Phi3)),
            ("<|user|>\n{{ x }}</s>", None),
            ("<|start|>assistant<|channel|>final<|message|>", Some(TemplateFamily::Harmony)),
            ("{{ '<\u{ff5c}User\u{ff5c}>' + c }}", Some(TemplateFamily::DeepSeek)),
            ("### Instruction:\n{{ x }}\n### Response:", None),
        ];
        for (template, family) in cases {
            assert_eq!(
                ChatTemplate::describe(template).family,
                family,
                "{template}"
            );
        }
    }

    #[test]
    fn the_first_line_is_the_first_non_blank_one_shortened_and_printable() {
        let template = format!(
            "\n   \n  {{% if x %}}\u{1b}[31m{}\n second",
            "a".repeat(200)
        );
        let t = ChatTemplate::describe(&template);
        assert!(
            t.first_line.starts_with("{% if x %}\u{fffd}[31m"),
            "{}",
            t.first_line
        );
        assert_eq!(t.first_line.chars().count(), FIRST_LINE_CHARS);
        assert!(t.first_line.ends_with('…'));
        assert_eq!(t.summary(), format!("{:?}", t.first_line));
        let long = "x".repeat(500);
        assert_eq!(ChatTemplate::describe(&long).bytes, 500);
    }
}
