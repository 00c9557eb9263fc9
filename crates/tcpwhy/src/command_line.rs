//! The words on the command line before they are parsed: `tcpwhy [FLAGS]
//! FILE…` means `tcpwhy diagnose [FLAGS] FILE…`, flags may come before the
//! command they belong to, and a word that is neither a command nor a file
//! but looks like a command gets a "did you mean".

use std::ffi::OsString;
use std::path::Path;

/// A command this far from a mistyped word (in edits) is suggested.
const SUGGEST_WITHIN: usize = 2;

/// The arguments with the command first: `diagnose` inserted when no
/// command is named, and flags written before the command moved after it,
/// where the command's definition takes them. A word that looks like a
/// mistyped command is refused with a message.
pub fn arguments(mut args: Vec<OsString>, cli: &clap::Command) -> Result<Vec<OsString>, String> {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let asks_for_help = words
        .get(1)
        .is_none_or(|first| ["-h", "--help", "-V", "--version"].contains(&first.as_str()));
    let Some(index) = first_positional(&words[1..], cli).map(|index| index + 1) else {
        return Ok(args);
    };
    let word = words[index].as_str();
    if commands(cli).any(|command| command == word) {
        let command = args.remove(index);
        args.insert(1, command);
        return Ok(args);
    }
    if asks_for_help {
        return Ok(args);
    }
    if word != "-" && !Path::new(word).exists() {
        if let Some(command) = suggestion(word, cli) {
            return Err(format!(
                "{word:?} is neither a command nor a file; did you mean '{command}'?"
            ));
        }
    }
    args.insert(1, "diagnose".into());
    Ok(args)
}

/// The commands' names, and `help`.
fn commands(cli: &clap::Command) -> impl Iterator<Item = &str> {
    cli.get_subcommands()
        .map(clap::Command::get_name)
        .chain(["help"])
}

/// Where the first word that is not a flag or a flag's value is.
fn first_positional(words: &[String], cli: &clap::Command) -> Option<usize> {
    let mut index = 0;
    while let Some(word) = words.get(index) {
        if word == "--" {
            return (index + 1 < words.len()).then_some(index + 1);
        }
        if word == "-" || !word.starts_with('-') {
            return Some(index);
        }
        index += 1 + values_after(word, cli);
    }
    None
}

/// How many words the flag `word` takes after it, in any command.
fn values_after(word: &str, cli: &clap::Command) -> usize {
    let names = |arg: &clap::Arg| {
        let long = arg.get_long().map(|long| format!("--{long}"));
        let short = arg.get_short().map(|short| format!("-{short}"));
        [long, short].into_iter().flatten().collect::<Vec<_>>()
    };
    std::iter::once(cli)
        .chain(cli.get_subcommands())
        .flat_map(clap::Command::get_arguments)
        .find(|arg| names(arg).iter().any(|name| name == word))
        .filter(|arg| arg.get_action().takes_values())
        .map_or(0, |arg| {
            arg.get_num_args().map_or(1, |values| values.min_values())
        })
}

/// The command nearest to `word`, if it is near enough.
fn suggestion<'a>(word: &str, cli: &'a clap::Command) -> Option<&'a str> {
    commands(cli)
        .map(|command| (strsim::levenshtein(word, command), command))
        .filter(|(distance, _)| *distance <= SUGGEST_WITHIN)
        .min()
        .map(|(_, command)| command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
        super::arguments(args, &crate::cli::definition())
    }

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
    }

    #[test]
    fn flags_before_a_command_go_after_it() {
        let args = arguments(words("tcpwhy -q connections t.pcap")).unwrap();
        assert_eq!(joined(args), "tcpwhy connections -q t.pcap");
        let line = "tcpwhy --host 10.0.0.1 --between +1s +2s -o out timeline t.pcap";
        assert_eq!(
            joined(arguments(words(line)).unwrap()),
            "tcpwhy timeline --host 10.0.0.1 --between +1s +2s -o out t.pcap"
        );
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
