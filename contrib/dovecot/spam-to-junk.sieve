# nbspamd: files mail that nbspamd marked as spam (X-Spam-Flag: YES, added by its milter or by
# contrib/postfix/nbspamd-filter) into the user's Junk mailbox at delivery. A global script run
# before the user's own (sieve_before in 90-nbspamd.conf); needs the sieve plugin in LMTP or LDA.
require ["fileinto", "mailbox"];

if header :is "X-Spam-Flag" "YES" {
  fileinto :create "Junk";
}
