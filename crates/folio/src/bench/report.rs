//! One benchmark's outcome: rows of Folio's number, the same-run baseline,
//! their ratio and the target it is judged by, printed as a table and saved
//! as JSON with the machine it ran on. Absolute numbers alone mean little on
//! shared machines, so the ratio always sits next to them.

use serde_json::{json, Value};

/// What a row's target constrains: Folio's own number, or its ratio to the baseline.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    AtLeast(f64),
    AtMost(f64),
    RatioAtLeast(f64),
    RatioAtMost(f64),
    None,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub metric: String,
    pub unit: &'static str,
    pub folio: f64,
    pub baseline: Option<f64>,
    pub target: Target,
}

impl Row {
    pub fn new(metric: impl Into<String>, unit: &'static str, folio: f64) -> Row {
        Row {
            metric: metric.into(),
            unit,
            folio,
            baseline: None,
            target: Target::None,
        }
    }

    pub fn baseline(mut self, value: f64) -> Row {
        self.baseline = Some(value);
        self
    }

    pub fn target(mut self, target: Target) -> Row {
        self.target = target;
        self
    }

    /// Folio over the baseline, whatever the unit: for throughputs higher is
    /// better, for times and sizes lower is.
    pub fn ratio(&self) -> Option<f64> {
        self.baseline.filter(|b| *b != 0.0).map(|b| self.folio / b)
    }

    pub fn met(&self) -> Option<bool> {
        match self.target {
            Target::AtLeast(t) => Some(self.folio >= t),
            Target::AtMost(t) => Some(self.folio <= t),
            Target::RatioAtLeast(t) => self.ratio().map(|r| r >= t),
            Target::RatioAtMost(t) => self.ratio().map(|r| r <= t),
            Target::None => None,
        }
    }

    fn target_text(&self) -> String {
        match self.target {
            Target::AtLeast(t) => format!("≥ {} {}", number(t), self.unit),
            Target::AtMost(t) => format!("≤ {} {}", number(t), self.unit),
            Target::RatioAtLeast(t) => format!("ratio ≥ {t}×"),
            Target::RatioAtMost(t) => format!("ratio ≤ {t}×"),
            Target::None => String::new(),
        }
    }

    fn to_json(&self) -> Value {
        let (on, op, value) = match self.target {
            Target::AtLeast(t) => ("folio", ">=", Some(t)),
            Target::AtMost(t) => ("folio", "<=", Some(t)),
            Target::RatioAtLeast(t) => ("ratio", ">=", Some(t)),
            Target::RatioAtMost(t) => ("ratio", "<=", Some(t)),
            Target::None => ("", "", None),
        };
        json!({
            "metric": self.metric,
            "unit": self.unit,
            "folio": self.folio,
            "baseline": self.baseline,
            "ratio": self.ratio(),
            "target": value.map(|v| json!({ "on": on, "op": op, "value": v })),
            "met": self.met(),
        })
    }
}

pub struct Report {
    pub name: &'static str,
    pub title: String,
    /// What the baseline column measured.
    pub baseline: String,
    pub rows: Vec<Row>,
    /// Context a reader needs to trust the numbers (sizes, settings, checks).
    pub details: Value,
    pub notes: Vec<String>,
}

impl Report {
    pub fn table(&self) -> String {
        let header = ["metric", "folio", "baseline", "ratio", "target", "met"];
        let mut lines: Vec<[String; 6]> = vec![header.map(String::from)];
        for r in &self.rows {
            lines.push([
                r.metric.clone(),
                format!("{} {}", number(r.folio), r.unit),
                r.baseline
                    .map(|b| format!("{} {}", number(b), r.unit))
                    .unwrap_or_else(|| "—".into()),
                r.ratio()
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_else(|| "—".into()),
                r.target_text(),
                match r.met() {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => String::new(),
                },
            ]);
        }
        let widths: Vec<usize> = (0..header.len())
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = format!(
            "\n{} — {}\n  baseline: {}\n",
            self.name, self.title, self.baseline
        );
        for (i, l) in lines.iter().enumerate() {
            let cells: Vec<String> = l
                .iter()
                .zip(&widths)
                .enumerate()
                // Numbers read best right-aligned, words left-aligned.
                .map(|(c, (s, w))| {
                    if (1..=3).contains(&c) {
                        format!("{s:>w$}")
                    } else {
                        format!("{s:<w$}")
                    }
                })
                .collect();
            out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
            if i == 0 {
                out.push_str(&format!(
                    "  {}\n",
                    "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1))
                ));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        out
    }

    pub fn to_json(&self, quick: bool) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "baseline": self.baseline,
            "quick": quick,
            "rows": self.rows.iter().map(Row::to_json).collect::<Vec<_>>(),
            "details": self.details,
            "notes": self.notes,
            "machine": machine(),
            "folio_version": env!("CARGO_PKG_VERSION"),
            "unix_time": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        })
    }
}

/// Enough to tell two machines apart when comparing result files.
fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
    });
    json!({
        "cpu": cpu,
        "cores": super::cores(),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
    })
}

/// Three significant digits at most, thousands separated: 12,345 · 98.7 · 0.123.
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let abs = x.abs();
    let decimals = if abs >= 100.0 || abs == 0.0 {
        0
    } else if abs >= 10.0 {
        1
    } else if abs >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.decimals$}");
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut grouped = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_rounded() {
        assert_eq!(number(1234567.8), "1,234,568");
        assert_eq!(number(98.76), "98.8");
        assert_eq!(number(0.12345), "0.123");
        assert_eq!(number(-4321.0), "-4,321");
    }

    #[test]
    fn targets_judge_the_right_number() {
        let r = Row::new("x", "ms", 20.0)
            .baseline(10.0)
            .target(Target::RatioAtMost(3.0));
        assert_eq!(r.ratio(), Some(2.0));
        assert_eq!(r.met(), Some(true));
        assert_eq!(
            Row::new("y", "ms", 40.0).target(Target::AtMost(30.0)).met(),
            Some(false)
        );
        assert_eq!(Row::new("z", "ms", 40.0).met(), None);
    }
}
