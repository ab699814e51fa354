//! The command policy on a table of commands: read-only, ask, deny — including the usual ways
//! around a regex blacklist.

use tooltrail_sandbox::policy::{Verdict, classify};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Read,
    Ask,
    Deny,
}

use Expect::{Ask, Deny, Read};

const TABLE: &[(&str, Expect)] = &[
    // Read-only: plain words from the allowlist, plain operators.
    ("ls", Read),
    ("ls -la src", Read),
    ("find . -name '*.go' | wc -l", Read),
    (
        "find . -type f -name \"*.rs\" -not -path './target/*'",
        Read,
    ),
    ("cat README.md", Read),
    ("head -n 20 src/main.rs && tail -5 src/lib.rs", Read),
    ("grep -rn 'func main' --include='*.go' .", Read),
    ("rg -n TODO src || echo none", Read),
    ("wc -l src/*.rs; du -sh .", Read),
    ("sort names.txt | uniq -c | sort -rn | head", Read),
    ("cut -d: -f1 data.txt | tr a-z A-Z", Read),
    ("git status", Read),
    ("git log --oneline -10", Read),
    ("git diff HEAD~1 -- src/", Read),
    ("git show HEAD:README.md", Read),
    ("git branch -a", Read),
    ("git --no-pager blame -L 1,20 src/main.rs", Read),
    ("git ls-files | wc -l", Read),
    ("ls\npwd\necho done", Read),
    ("ls 2>/dev/null", Read),
    ("find . -name '*.go' 2>&1 | head", Read),
    ("sed -n '1,20p' src/main.rs", Read),
    ("sed 's/foo/bar/g' notes.txt", Read),
    ("tree -L 2", Read),
    ("file image.png && stat README.md", Read),
    ("echo hello", Read),
    ("(cd src && ls)", Read),
    ("df -h; pwd", Read),
    ("fd -e rs | head", Read),
    ("git diff HEAD~1..HEAD", Read),
    ("grep -rn --include=*.rs fn src", Read),
    // Ask: anything beyond plain read-only commands.
    ("echo hello > out.txt", Ask),
    ("ls >> list.txt", Ask),
    ("cat < input.txt", Ask),
    ("echo $(whoami)", Ask),
    ("echo `id`", Ask),
    ("echo $HOME", Ask),
    ("echo \"$PATH\"", Ask),
    ("cat ~/.ssh/id_rsa", Ask),
    ("FOO=1 ls", Ask),
    ("python -c 'print(1)'", Ask),
    ("python3 script.py", Ask),
    ("node -e 'require(\"fs\")'", Ask),
    ("bash -c 'ls'", Ask),
    ("sh script.sh", Ask),
    ("env rm file", Ask),
    ("env", Ask),
    ("xargs rm < files.txt", Ask),
    ("find . -name '*.tmp' | xargs rm", Ask),
    ("find . -name '*.tmp' -delete", Ask),
    ("find . -exec rm {} \\;", Ask),
    ("find . -execdir cat {} +", Ask),
    ("find . -fprint out.txt", Ask),
    ("sed -i 's/a/b/' file.txt", Ask),
    ("sed -i.bak 's/a/b/' file.txt", Ask),
    ("sed -ni 's/a/b/p' file.txt", Ask),
    ("sed 's/a/b/w out.txt' file.txt", Ask),
    ("sed -n '1w out.txt' file.txt", Ask),
    ("sed 's/.*/date/e' file.txt", Ask),
    ("sort -o sorted.txt names.txt", Ask),
    ("rg --pre ./evil.sh foo", Ask),
    ("rm build.log", Ask),
    ("rm -rf target", Ask),
    ("mkdir new", Ask),
    ("touch x", Ask),
    ("cp a b", Ask),
    ("git commit -m x", Ask),
    ("git push", Ask),
    ("git checkout main", Ask),
    ("git branch -D feature", Ask),
    ("git branch new-feature", Ask),
    ("git -c core.pager=evil log", Ask),
    ("git diff --output=patch.txt", Ask),
    ("./configure", Ask),
    ("/usr/bin/ls", Ask),
    ("make", Ask),
    ("cargo build", Ask),
    ("npm install", Ask),
    ("curl https://example.com", Ask),
    ("ls &", Ask),
    ("for f in *.go; do cat $f; done", Ask),
    ("if true; then ls; fi", Ask),
    ("awk '{print $1}' file", Ask),
    ("cat <<EOF\nhello\nEOF", Ask),
    ("diff <(ls a) <(ls b)", Ask),
    ("echo $((1+2))", Ask),
    ("tee out.txt", Ask),
    ("ls; rm -rf build", Ask),
    ("ls\nrm notes.txt", Ask),
    ("unknown-tool --flag", Ask),
    ("kill 1234", Ask),
    ("", Ask),
    ("cat /etc/passwd", Ask),
    ("ls /root/.ssh", Ask),
    ("cat ../secret.txt", Ask),
    ("cd .. && ls", Ask),
    ("grep -r token --include=/etc/x .", Ask),
    ("git -C / status", Ask),
    ("find / -name id_rsa", Ask),
    // Deny: refused even when approved.
    ("rm -rf /", Deny),
    ("rm -rf ~", Deny),
    ("rm -rf ~/", Deny),
    ("rm -rf /*", Deny),
    ("rm -fr /", Deny),
    ("rm -r -f /", Deny),
    ("rm -rf -- /", Deny),
    ("rm --recursive --force /", Deny),
    ("rm -rf --no-preserve-root /", Deny),
    ("rm -rf \"$HOME\"", Deny),
    ("rm -rf ${HOME}", Deny),
    ("rm -rf $HOME/", Deny),
    ("rm -rf /usr", Deny),
    ("rm${IFS}-rf ~", Deny),
    ("rm${IFS}-rf${IFS}/", Deny),
    ("rm$IFS-rf$IFS/", Deny),
    ("\\rm -rf /", Deny),
    ("r''m -rf /", Deny),
    ("'rm' -rf '/'", Deny),
    ("/bin/rm -rf /", Deny),
    ("ls\nrm -rf /", Deny),
    ("ls; rm -rf ~", Deny),
    ("ls && rm -rf / || true", Deny),
    ("echo $(rm -rf /)", Deny),
    ("echo `rm -rf ~`", Deny),
    ("env rm -rf /", Deny),
    ("env FOO=1 rm -rf /", Deny),
    ("echo / | xargs rm -rf /", Deny),
    ("timeout 5 rm -rf ~", Deny),
    ("nice -n 10 rm -rf /", Deny),
    ("bash -c 'rm -rf /'", Deny),
    ("sh -c \"rm -rf ~\"", Deny),
    ("bash -c \"bash -c 'rm -rf /'\"", Deny),
    ("eval 'rm -rf /'", Deny),
    ("busybox rm -rf /", Deny),
    ("mkfs.ext4 /dev/sda1", Deny),
    ("mkfs -t ext4 /dev/sdb", Deny),
    ("dd if=/dev/zero of=/dev/sda bs=1M", Deny),
    ("dd if=/dev/urandom of=/dev/nvme0n1", Deny),
    ("echo hi > /dev/sda", Deny),
    (":(){ :|:& };:", Deny),
    ("bomb() { bomb | bomb & }; bomb", Deny),
    ("sudo ls", Deny),
    ("sudo rm -rf build", Deny),
    ("su -c ls", Deny),
    ("doas ls", Deny),
    ("ls | sudo tee /etc/hosts", Deny),
    ("shutdown -h now", Deny),
    ("reboot", Deny),
    ("systemctl poweroff", Deny),
    ("chmod -R 777 /", Deny),
    ("chown -R nobody ~", Deny),
    ("for i in 1; do rm -rf /; done", Deny),
    ("if true; then sudo ls; fi", Deny),
    ("ls; rm -rf / #", Deny),
    ("ls ((( broken; rm -rf /", Deny),
    ("rm -rf ~/..", Deny),
    ("rm -rf /./", Deny),
    ("find / -delete", Deny),
    ("find ~ -exec rm {} +", Deny),
    ("cp /dev/zero /dev/sda", Deny),
    ("shred /dev/nvme0n1", Deny),
];

fn kind(verdict: &Verdict) -> Expect {
    match verdict {
        Verdict::ReadOnly => Read,
        Verdict::Ask { .. } => Ask,
        Verdict::Deny { .. } => Deny,
    }
}

#[test]
fn classifier_table() {
    assert!(TABLE.len() >= 40);
    let mut wrong = Vec::new();
    for (command, expected) in TABLE {
        let verdict = classify(command);
        if kind(&verdict) != *expected {
            wrong.push(format!(
                "{command:?}: expected {expected:?}, got {verdict:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} misclassified:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn reasons_are_single_sentences() {
    for (command, _) in TABLE {
        match classify(command) {
            Verdict::ReadOnly => {}
            Verdict::Ask { reason } | Verdict::Deny { reason } => {
                assert!(!reason.is_empty(), "{command}");
                assert!(!reason.contains('\n'), "{command}: {reason}");
                assert!(reason.len() < 120, "{command}: {reason}");
            }
        }
    }
}

#[test]
fn reasons_name_what_needs_approval() {
    let reason = |command: &str| match classify(command) {
        Verdict::Ask { reason } | Verdict::Deny { reason } => reason,
        Verdict::ReadOnly => String::new(),
    };
    assert_eq!(
        reason("python -c 'print(1)'"),
        "`python` is an interpreter and can run any code"
    );
    assert_eq!(reason("find . -delete"), "`find -delete` removes files");
    assert_eq!(
        reason("find . -exec rm {} +"),
        "`find -exec` runs other programs"
    );
    assert_eq!(reason("sed -i s/a/b/ f"), "`sed -i` edits files in place");
    assert_eq!(reason("xargs rm"), "`xargs` runs other programs");
    assert_eq!(reason("echo hi > f"), "it redirects output to a file");
    assert_eq!(reason("echo $(id)"), "it uses command substitution");
    assert_eq!(reason("echo $X"), "it expands variables");
    assert_eq!(
        reason("cat /etc/passwd"),
        "it names a path outside the workspace (`/etc/passwd`)"
    );
    assert_eq!(
        reason("rm -rf /"),
        "removing the root folder, a system folder or the home folder is never allowed"
    );
    assert_eq!(
        reason("sudo ls"),
        "`sudo` and other ways to change user are never run"
    );
    assert_eq!(reason(":(){ :|:& };:"), "fork bombs are never run");
}
