# nbspamd: a message a user moved out of Junk is ham, unless it went to the trash. Run by
# Dovecot's IMAPSieve when a message is copied or moved from Junk to any other mailbox
# (90-nbspamd.conf, imapsieve_mailbox2_*); pipes it to nbspamd-learn with the label and the IMAP
# user, whose layer relearns it (docs/DOVECOT.md).
require ["vnd.dovecot.pipe", "copy", "imapsieve", "environment", "variables"];

if environment :matches "imap.mailbox" "*" {
  set "mailbox" "${1}";
}

# Spam thrown away is not ham. A site whose trash has another name adds it here.
if string :is "${mailbox}" ["Trash", "Deleted Items", "Deleted Messages"] {
  stop;
}

if environment :matches "imap.user" "*" {
  set "username" "${1}";
}

pipe :copy "nbspamd-learn" ["ham", "${username}"];
