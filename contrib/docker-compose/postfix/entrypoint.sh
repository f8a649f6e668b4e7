#!/bin/sh
# Configures Postfix from the environment and runs it in the foreground (postfix start-fg).
#   MYHOSTNAME      the server's name
#   MYDESTINATION   the domains delivered here
#   NBSPAMD_MILTER  where nbspamd's milter listens (inet:nbspamd:11332)
set -eu
[ -f /etc/postfix/main.cf ] || cp /usr/share/postfix/main.cf.debian /etc/postfix/main.cf
postconf -e \
  "myhostname = ${MYHOSTNAME:-mail.example.org}" \
  "mydestination = ${MYDESTINATION:-localhost}" \
  "mynetworks = 127.0.0.0/8 [::1]/128" \
  "inet_interfaces = all" \
  "maillog_file = /dev/stdout" \
  "smtpd_milters = ${NBSPAMD_MILTER}" \
  "non_smtpd_milters = ${NBSPAMD_MILTER}" \
  "milter_protocol = 6" \
  "milter_default_action = accept" \
  "milter_connect_timeout = 10s" \
  "milter_content_timeout = 60s"
# Debian runs smtpd chrooted in /var/spool/postfix: it needs its own copy of the files it
# resolves names with (nbspamd's name comes from the compose network's DNS).
mkdir -p /var/spool/postfix/etc
for file in resolv.conf hosts services nsswitch.conf host.conf localtime; do
  [ -e "/etc/$file" ] && cp -L "/etc/$file" "/var/spool/postfix/etc/$file"
done
[ -f /etc/aliases ] || echo "postmaster: root" >/etc/aliases
newaliases
exec postfix start-fg
