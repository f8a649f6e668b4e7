# nbspamd: a message a user moved into Junk is spam. Run by Dovecot's IMAPSieve when a message is
# copied or moved into the Junk mailbox (90-nbspamd.conf, imapsieve_mailbox1_*); pipes it to
# nbspamd-learn with the label and the IMAP user, whose layer learns it (docs/DOVECOT.md).
require ["vnd.dovecot.pipe", "copy", "imapsieve", "environment", "variables"];

if environment :matches "imap.user" "*" {
  set "username" "${1}";
}

pipe :copy "nbspamd-learn" ["spam", "${username}"];
