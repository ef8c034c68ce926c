//! The check report as JUnit XML, the format CI systems (GitHub Actions' test reporters,
//! GitLab, Jenkins) show natively: a `<testsuite>` per model, a `<testcase>` per check that
//! ran (`classname` the model's path, `name` the check id); an error finding is a
//! `<failure>`, a check not run a `<skipped>`, warnings and notes go to `<system-out>`.

use std::fmt::Write;

use super::{Check, CheckReport, ModelResult, Severity};

/// `text` escaped for XML and HTML attribute values and text.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// Whether `check` was not run on `model` (an info finding saying so).
fn skipped(model: &ModelResult, check: Check) -> Option<&str> {
    model
        .findings
        .iter()
        .find(|f| {
            f.check == check && f.severity == Severity::Info && f.message.starts_with("not run")
        })
        .map(|f| f.message.as_str())
}

/// The report as a JUnit XML document.
pub fn to_junit(report: &CheckReport) -> String {
    let cases: usize = report.models.iter().map(|m| m.checks_run.len()).sum();
    let failures: usize = report
        .models
        .iter()
        .flat_map(|m| m.checks_run.iter().map(move |&c| (m, c)))
        .filter(|(m, c)| {
            m.findings
                .iter()
                .any(|f| f.check == *c && f.severity == Severity::Error)
        })
        .count();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"skinview check\" tests=\"{cases}\" failures=\"{failures}\" errors=\"0\">"
    );
    for m in &report.models {
        suite(&mut x, m);
    }
    x.push_str("</testsuites>\n");
    x
}

/// One model's `<testsuite>`.
fn suite(x: &mut String, m: &ModelResult) {
    let path = escape(&m.path);
    let failed = |c: Check| {
        m.findings
            .iter()
            .any(|f| f.check == c && f.severity == Severity::Error)
    };
    let failures = m.checks_run.iter().filter(|&&c| failed(c)).count();
    let skips = m
        .checks_run
        .iter()
        .filter(|&&c| skipped(m, c).is_some())
        .count();
    let _ = writeln!(
        x,
        "  <testsuite name=\"{path}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" \
         skipped=\"{skips}\">",
        m.checks_run.len()
    );
    for &c in &m.checks_run {
        let _ = write!(x, "    <testcase classname=\"{path}\" name=\"{}\"", c.id());
        let found: Vec<_> = m.findings.iter().filter(|f| f.check == c).collect();
        if found.is_empty() {
            x.push_str("/>\n");
            continue;
        }
        x.push_str(">\n");
        if let Some(reason) = skipped(m, c) {
            let _ = writeln!(x, "      <skipped message=\"{}\"/>", escape(reason));
        }
        for f in found.iter().filter(|f| f.severity == Severity::Error) {
            let text = escape(&f.message);
            // A crashed or timed-out model's worker's last lines on standard error.
            let stderr: String = f
                .stderr
                .iter()
                .map(|line| format!("\n{}", escape(line)))
                .collect();
            let _ = writeln!(
                x,
                "      <failure message=\"{text}\" type=\"error\">{text}{stderr}</failure>"
            );
        }
        let notes: Vec<String> = found
            .iter()
            .filter(|f| f.severity != Severity::Error && skipped(m, c) != Some(f.message.as_str()))
            .map(|f| format!("{}: {}", f.severity.name(), escape(&f.message)))
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(x, "      <system-out>{}</system-out>", notes.join("\n"));
        }
        x.push_str("    </testcase>\n");
    }
    x.push_str("  </testsuite>\n");
}
