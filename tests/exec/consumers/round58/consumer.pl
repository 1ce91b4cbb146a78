#!/usr/bin/perl
# Round 58: seed 000's procedure over protocol 1 (docs/protocol.md), with one bug picked by $ARGV[0]:
#   string_watermark : the watermark compared with `le` (string order): "100" le "90" (step 4, invariant 1)
#   lost_commit_done : a commit answered lost is taken as done and the page goes on (a lost reply may not
#                      have taken effect; invariant 1)
#   token_file       : the next cursor is cached in a file ("warm start"); a new life fetches from it instead
#                      of the loaded resume_cursor, and barriers from the loaded identity (step 1, invariant 3)
#   numeric_ne       : the ids_at holder compared with `!=` (numeric): "e5" and "x5" both read as 0, so a
#                      new identity at a served position passes (step 3: conflicting identity)
use strict;
use warnings;
use JSON::PP;
$| = 1;
my $BUG = $ARGV[0] // '';
my $TOKEN_FILE = $ARGV[1] // '/tmp/r58-token-cache';
my $json = JSON::PP->new->canonical;
my %TERMINAL = map { $_ => 1 } qw(applied ignored quarantined);
my $contract;

sub recv_line {
    my $line = <STDIN>;
    exit 0 unless defined $line;
    return $json->decode($line);
}
sub req { print $json->encode($_[0]), "\n"; return recv_line(); }

sub validate {
    my ($cp, $events, $ids_at) = @_;
    my $prev;
    for my $e (@$events) {
        return "regression at $e->{position}" if defined $prev && $e->{position} <= $prev;
        $prev = $e->{position};
        my $holder = $ids_at->{"$e->{position}"};
        my $differs = !defined $holder ? 0
                    : $BUG eq 'numeric_ne' ? do { no warnings; $holder != $e->{id} } : $holder ne $e->{id};
        return "conflicting identity at $e->{position}" if $differs;
        return "gap at $e->{position}"
            if !defined $holder && !$contract->{backfills} && $e->{position} <= $cp->{applied_position};
    }
    return undef;
}

sub attempt {
    my $cp = req({op => 'load'})->{value};
    my $cursor = $cp->{resume_cursor};
    if ($BUG eq 'token_file' && open(my $fh, '<', $TOKEN_FILE)) {
        my $t = <$fh>; close $fh;
        chomp $t if defined $t;
        $cursor = $t if defined $t && length $t;
    }
    my $fr = req({op => 'fetch', cursor => $cursor});
    return 'lost' if $fr->{type} eq 'lost';
    if ($fr->{type} eq 'none') { req({op => 'halt', reason => 'refused cursor'}); return 'halt'; }
    my $page = $fr->{value};
    if ($BUG eq 'token_file' && open(my $fh, '>', $TOKEN_FILE)) { print $fh "$page->{next_cursor}\n"; close $fh; }
    my $events = $page->{events};
    my $rc = req({op => 'lookup', events => $events})->{value};
    my $problem = validate($cp, $events, $rc->{ids_at});
    if (defined $problem) { req({op => 'halt', reason => $problem}); return 'halt'; }
    return 'caught_up' if !@$events && $page->{next_cursor} eq $cursor;
    my $applied = $cp->{applied_position};
    for my $ev (@$events) {
        my $o = $rc->{outcomes}{$ev->{id}};
        my $below = $BUG eq 'string_watermark' ? ("$ev->{position}" le "$cp->{applied_position}")
                                                 : ($ev->{position} <= $cp->{applied_position});
        if ((defined $o && $TERMINAL{$o}) || (!$contract->{backfills} && $below)) {
            req({op => 'skip', event => $ev});
            $applied = $ev->{position} if $ev->{position} > $applied;
            next;
        }
        my $d = req({op => 'handle', event => $ev})->{value};
        my $target = $ev->{position} > $applied ? $ev->{position} : $applied;
        my %name = (apply => 'applied', ignore => 'ignored', quarantine => 'quarantined');
        return 'blocked' unless $name{$d};
        my $with_effect = JSON::PP::false;
        if ($d eq 'apply') {
            if ($contract->{external_sink}) {
                my $op = req({op => 'reserve', event => $ev})->{value};
                if ($op->{state} ne 'committed') {
                    my $reply = req({op => 'call', event => $ev, reservation => $op->{reservation}});
                    my $st = req({op => 'settle', event => $ev, reservation => $op->{reservation},
                                  observation => $reply->{value}})->{value};
                    return 'blocked' if $st ne 'committed';
                }
            } else { $with_effect = JSON::PP::true; }
        }
        my $r = req({op => 'commit', event => $ev, outcome => $name{$d}, applied_position => $target + 0,
                     with_effect => $with_effect});
        return 'lost' if $r->{type} eq 'lost' && $BUG ne 'lost_commit_done';
        $applied = $target;
    }
    return 'caught_up' if $page->{next_cursor} eq $cp->{resume_cursor};
    my $b = req({op => 'barrier', cursor => $cp->{resume_cursor}, version => $cp->{checkpoint_version},
                 next_cursor => $page->{next_cursor}, next_version => $cp->{checkpoint_version} + 1,
                 applied_position => $applied + 0});
    return 'lost' if $b->{type} eq 'lost';
    return $b->{value} ? 'advanced' : 'rejected';
}

my $hello = recv_line();
if ($hello->{type} ne 'hello' || $hello->{value}{protocol} != 1) { print STDERR "unknown protocol\n"; exit 3; }
$contract = $hello->{value}{contract};
while (1) {
    my $s = attempt();
    recv_line() if $s eq 'halt';
    req({op => 'wait', reason => $s}) if $s eq 'caught_up' || $s eq 'blocked';
}
