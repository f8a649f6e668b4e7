# BayesProb: a SpamAssassin plugin for the accuracy harness. It defines the template tag
# _BAYESPROB_, the Bayes spam probability printed with %.17g ("none" when Bayes gave none),
# because the stock _BAYES_ tag rounds it to 4 decimals.
package BayesProb;

use strict;
use warnings;
use Mail::SpamAssassin::Plugin;
our @ISA = qw(Mail::SpamAssassin::Plugin);

sub new {
  my ($class, $mailsa) = @_;
  my $self = $class->SUPER::new($mailsa);
  bless($self, $class);
  return $self;
}

sub check_start {
  my ($self, $opts) = @_;
  my $pms = $opts->{permsgstatus};
  $pms->set_tag('BAYESPROB', sub {
    return defined $pms->{bayes_score} ? sprintf('%.17g', $pms->{bayes_score}) : 'none';
  });
  return;
}

1;
