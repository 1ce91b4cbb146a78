#!/usr/bin/perl
# Round 62: seed 000's procedure over the wire (docs/protocol.md) in Perl, with one variant picked by $ARGV[0].
#   equal-positions    step 3: the regression check is "<", so two events at one position pass
#   dead-letter-tail   invariant 5: a dead letter whose later page events all hold receipts is quarantined
#   numeric-token      step 7: tokens compared with == (numerically) in the empty-page test
#   remember-identity  correct: after a barrier, the next attempt starts from the checkpoint it just wrote
#                      (cursor, version + 1, prefix) without a load; a lost or lost-race barrier reloads
#   none               the procedure
use strict;
use warnings;
no warnings 'numeric';
use JSON::PP;
$| = 1;
my $BUG = $ARGV[0] // 'none';
my $json = JSON::PP->new->canonical;
my %TERMINAL = map { $_ => 1 } qw(applied ignored quarantined);
my $contract;
my $remembered;

sub nextline { my $l = <STDIN>; exit 0 unless defined $l; return $json->decode($l); }
sub ask { print $json->encode($_[0]), "\n"; return nextline(); }
sub max2 { $_[0] > $_[1] ? $_[0] : $_[1] }
sub halt { ask({ op => 'halt', reason => $_[0] }); sleep 1 while 1; }

sub validate {
    my ($cp, $page, $ids_at) = @_;
    my $prev;
    for my $e (@{ $page->{events} }) {
        if (defined $prev) {
            my $bad = $BUG eq 'equal-positions' ? $e->{position} < $prev : $e->{position} <= $prev;
            return "regression at $e->{position}" if $bad;
        }
        $prev = $e->{position};
        my $holder = $ids_at->{"$e->{position}"};
        return "conflicting identity at $e->{position}" if defined $holder && $holder ne $e->{id};
        return "gap at $e->{position}"
            if !defined $holder && !$contract->{backfills} && $e->{position} <= $cp->{applied_position};
    }
    return undef;
}

sub settle {
    my ($e) = @_;
    my $op = ask({ op => 'reserve', event => $e })->{value};
    return 1 if $op->{state} eq 'committed';
    my $r = ask({ op => 'call', event => $e, reservation => $op->{reservation} });
    my $st = ask({ op => 'settle', event => $e, reservation => $op->{reservation}, observation => $r->{value} });
    return $st->{value} eq 'committed';
}

sub same_token { my ($a, $b) = @_; return $BUG eq 'numeric-token' ? $a == $b : $a eq $b; }

sub attempt {
    my $cp = $remembered // ask({ op => 'load' })->{value};
    undef $remembered;
    my $f = ask({ op => 'fetch', cursor => $cp->{resume_cursor} });
    return 'lost' if $f->{type} eq 'lost';
    halt('cursor refused') if $f->{type} eq 'none';
    my $page = $f->{value};
    my $rec = ask({ op => 'lookup', events => $page->{events} })->{value};
    my $problem = validate($cp, $page, $rec->{ids_at});
    halt($problem) if defined $problem;
    my @events = @{ $page->{events} };
    return 'caught_up' if !@events && same_token($page->{next_cursor}, $cp->{resume_cursor});
    my $prefix = $cp->{applied_position};
    for my $i (0 .. $#events) {
        my $e = $events[$i];
        my $o = $rec->{outcomes}{ $e->{id} };
        if ((defined $o && $TERMINAL{$o}) || (!$contract->{backfills} && $e->{position} <= $cp->{applied_position})) {
            ask({ op => 'skip', event => $e });
            $prefix = max2($prefix, $e->{position});
            next;
        }
        my $d = ask({ op => 'handle', event => $e })->{value};
        if ($BUG eq 'dead-letter-tail' && $d eq 'dead_letter' && $i < $#events) {
            my @rest = @events[$i + 1 .. $#events];
            $d = 'quarantine' unless grep { !defined $rec->{outcomes}{ $_->{id} } } @rest;
        }
        my %outcome = (apply => 'applied', ignore => 'ignored', quarantine => 'quarantined');
        return 'blocked' unless exists $outcome{$d};
        my $target = max2($prefix, $e->{position});
        if ($d eq 'apply' && $contract->{external_sink}) { return 'blocked' unless settle($e); }
        my $c = ask({ op => 'commit', event => $e, outcome => $outcome{$d}, applied_position => $target,
                      with_effect => ($d eq 'apply' && !$contract->{external_sink}) ? JSON::PP::true : JSON::PP::false });
        return 'lost' if $c->{type} eq 'lost';
        $prefix = $target;
    }
    return 'caught_up' if $page->{next_cursor} eq $cp->{resume_cursor};
    my $b = ask({ op => 'barrier', cursor => $cp->{resume_cursor}, version => $cp->{checkpoint_version},
                  next_cursor => $page->{next_cursor}, next_version => $cp->{checkpoint_version} + 1,
                  applied_position => $prefix });
    return 'lost' if $b->{type} eq 'lost';
    return 'rejected' unless $b->{value};
    if ($BUG eq 'remember-identity') {
        $remembered = { resume_cursor => $page->{next_cursor}, checkpoint_version => $cp->{checkpoint_version} + 1,
                        applied_position => $prefix };
    }
    return 'advanced';
}

my $hello = nextline();
if ($hello->{type} ne 'hello' || $hello->{value}{protocol} != 1) { print STDERR "unknown protocol\n"; exit 3; }
$contract = $hello->{value}{contract};
while (1) {
    my $s = attempt();
    ask({ op => 'wait', reason => $s }) if $s eq 'caught_up' || $s eq 'blocked';
}
