//! The words on the command line before they are parsed: `tcpwhy [FLAGS]
//! FILE…` means `tcpwhy diagnose [FLAGS] FILE…`, and a word that is neither
//! a command nor a file but looks like a command gets a "did you mean".

use std::ffi::OsString;
use std::path::Path;

/// Subcommand names; anything else in their place is a file to diagnose.
pub const COMMANDS: [&str; 11] = [
    "diagnose",
    "connections",
    "connection",
    "events",
    "transactions",
    "timeline",
    "report",
    "compare",
    "diff",
    "export",
    "help",
];

/// Flags followed by values, and how many: the words after them are not
/// commands or files.
const FLAGS_WITH_VALUES: [(&str, usize); 13] = [
    ("--format", 1),
    ("--host", 1),
    ("--port", 1),
    ("--net", 1),
    ("--connection", 1),
    ("--between", 2),
    ("--tick", 1),
    ("--output", 1),
    ("-o", 1),
    ("--detail", 1),
    ("--fail-on", 1),
    ("--packets", 1),
    ("--memory", 1),
];

/// A command this far from a mistyped word (in edits) is suggested.
const SUGGEST_WITHIN: usize = 2;

/// The arguments with `diagnose` inserted when no command is named, or the
/// message for a word that looks like a mistyped command.
pub fn arguments(mut args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let asks_for_help = words
        .get(1)
        .is_none_or(|first| ["-h", "--help", "-V", "--version"].contains(&first.as_str()));
    let Some(word) = first_positional(&words[1..]) else {
        return Ok(args);
    };
    if COMMANDS.contains(&word) || asks_for_help {
        return Ok(args);
    }
    if word != "-" && !Path::new(word).exists() {
        if let Some(command) = suggestion(word) {
            return Err(format!(
                "{word:?} is neither a command nor a file; did you mean '{command}'?"
            ));
        }
    }
    args.insert(1, "diagnose".into());
    Ok(args)
}

/// The first word that is not a flag or a flag's value.
fn first_positional(words: &[String]) -> Option<&str> {
    let mut index = 0;
    while let Some(word) = words.get(index) {
        if word == "--" {
            return words.get(index + 1).map(String::as_str);
        }
        if word == "-" || !word.starts_with('-') {
            return Some(word);
        }
        let values = FLAGS_WITH_VALUES
            .iter()
            .find(|(flag, _)| flag == word)
            .map_or(0, |(_, values)| *values);
        index += 1 + values;
    }
    None
}

/// The command nearest to `word`, if it is near enough.
fn suggestion(word: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|command| (edit_distance(word, command), *command))
        .filter(|(distance, _)| *distance <= SUGGEST_WITHIN)
        .min()
        .map(|(_, command)| command)
}

/// Levenshtein distance: insertions, deletions and substitutions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    fn joined(args: Vec<OsString>) -> String {
        let words: Vec<String> = args
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        words.join(" ")
    }

    #[test]
    fn a_file_first_is_diagnosed_whatever_the_flags_before_it() {
        let args = arguments(words("tcpwhy --format json --between +1s +2s t.pcap")).unwrap();
        assert_eq!(
            joined(args),
            "tcpwhy diagnose --format json --between +1s +2s t.pcap"
        );
        let args = arguments(words("tcpwhy -q connections t.pcap")).unwrap();
        assert_eq!(joined(args), "tcpwhy -q connections t.pcap");
    }

    #[test]
    fn a_mistyped_command_gets_a_suggestion() {
        let error = arguments(words("tcpwhy conections t.pcap")).unwrap_err();
        assert!(error.contains("did you mean 'connections'"), "{error}");
        let error = arguments(words("tcpwhy -q evnts t.pcap")).unwrap_err();
        assert!(error.contains("'events'"), "{error}");
        // Far from every command: a file name, left for the reader to report.
        assert!(arguments(words("tcpwhy capture-from-tuesday.pcap")).is_ok());
    }
}
