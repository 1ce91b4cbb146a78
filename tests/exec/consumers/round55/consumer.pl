#!/usr/bin/env perl
# Round 55 (tests/judge/test_hostile_round55.py): seed 000's procedure over protocol 1, written from
# docs/protocol.md alone, with the one bug $ARGV[0] names ('none': no bug):
#   falsy_holder      "is a receipt at this position?" asked of the holder id's truth: id "0" is false in Perl,
#                     so its replay behind applied_position is a gap (an unjustified halt) and another id at its
#                     position no conflict (step 3)
#   sort_events       the page is sorted by position instead of validated (step 3: a regression stops the attempt)
#   numeric_token     an empty page's token compared with == (as numbers): an advancing token is taken for the
#                     request's own (step 7: an empty page is not the end of the stream)
#   string_watermark  the watermark compared with `le` (as strings): 10 is "behind" 9 (step 4; invariants 1, 2)
#   falsy_token       a page whose next_cursor is false has none to publish: token "0" is false in Perl (step
#                     7: only the request's own token back is the end of the stream, for now)
#   token_seen        an empty page whose token this life fetched before is the end (unobservable: simkit's
#                     tokens never come back but as a page's own)
use strict; use warnings;
use JSON::PP;
use IO::Handle;
STDOUT->autoflush(1);
my $BUG = $ARGV[0] // 'none';
my $json = JSON::PP->new->utf8->canonical;
sub rd { my $l = <STDIN>; exit 0 unless defined $l; return $json->decode($l); }
sub rpc { print $json->encode($_[0]), "\n"; return rd(); }
my $hello = rd();
if ($hello->{value}{protocol} != 1) { print STDERR "unknown protocol\n"; exit 3; }
my $contract = $hello->{value}{contract};
my $backfills = $contract->{backfills} ? 1 : 0;
my $external = $contract->{external_sink} ? 1 : 0;
my %TERMINAL = map { $_ => 1 } qw(applied ignored quarantined);
my %seen_token;

sub settle {
    my ($e) = @_;
    my $op = rpc({op => 'reserve', event => $e})->{value};
    return 'committed' if $op->{state} eq 'committed';
    my $r = rpc({op => 'call', event => $e, reservation => $op->{reservation}});
    my $st = rpc({op => 'settle', event => $e, reservation => $op->{reservation}, observation => $r->{value}})->{value};
    return $st eq 'committed' ? 'committed' : 'blocked';
}

sub validate {
    my ($cp, $page, $ids_at) = @_;
    my $prev; my %ids;
    for my $e (@{$page->{events}}) {
        return 'regression' if defined $prev && $e->{position} <= $prev;
        return 'id twice' if $ids{$e->{id}}++;
        $prev = $e->{position};
        my $holder = $ids_at->{$e->{position}};
        if ($BUG eq 'falsy_holder') {     # 'is there a receipt here?' asked of the id's truth
            return 'conflicting identity' if $holder && $holder ne $e->{id};
            return 'gap' if !$holder && !$backfills && $e->{position} <= $cp->{applied_position};
            next;
        }
        return 'conflicting identity' if defined $holder && $holder ne $e->{id};
        return 'gap' if !defined $holder && !$backfills && $e->{position} <= $cp->{applied_position};
    }
    return undef;
}

sub attempt {
    my $cp = rpc({op => 'load'})->{value};
    my $f = rpc({op => 'fetch', cursor => $cp->{resume_cursor}});
    return 'lost' if $f->{type} eq 'lost';
    if ($f->{type} eq 'none') { rpc({op => 'halt', reason => 'refused cursor'}); exit 0; }
    my $page = $f->{value};
    if ($BUG eq 'sort_events') {
        $page = {%$page, events => [sort { $a->{position} <=> $b->{position} } @{$page->{events}}]};
    }
    my $rc = rpc({op => 'lookup', events => $page->{events}})->{value};
    my $why = validate($cp, $page, $rc->{ids_at});
    if ($why) { rpc({op => 'halt', reason => $why}); exit 0; }
    my $empty = !@{$page->{events}};
    if ($BUG eq 'numeric_token') {
        no warnings 'numeric';
        return 'caught_up' if $empty && $page->{next_cursor} == $cp->{resume_cursor};
    } elsif ($BUG eq 'token_seen') {
        return 'caught_up' if $empty && $seen_token{$page->{next_cursor}};
    }
    return 'caught_up' if $empty && $page->{next_cursor} eq $cp->{resume_cursor};
    $seen_token{$cp->{resume_cursor}} = 1;
    my $prefix = $cp->{applied_position};
    for my $e (@{$page->{events}}) {
        my $out = $rc->{outcomes}{$e->{id}} // '';
        my $behind = $BUG eq 'string_watermark' ? ($e->{position} le $cp->{applied_position})
                                                 : ($e->{position} <= $cp->{applied_position});
        if ($TERMINAL{$out} || (!$backfills && $behind)) {
            rpc({op => 'skip', event => $e});
            $prefix = $e->{position} if $e->{position} > $prefix;
            next;
        }
        my $d = rpc({op => 'handle', event => $e})->{value};
        my $target = $e->{position} > $prefix ? $e->{position} : $prefix;
        my %oc = (apply => 'applied', ignore => 'ignored', quarantine => 'quarantined');
        return 'blocked' unless $oc{$d};
        if ($d eq 'apply' && $external) {
            return 'blocked' unless settle($e) eq 'committed';
        }
        my $c = rpc({op => 'commit', event => $e, outcome => $oc{$d}, applied_position => $target,
                     with_effect => ($d eq 'apply' && !$external) ? JSON::PP::true : JSON::PP::false});
        return 'lost' if $c->{type} eq 'lost';
        $prefix = $target;
    }
    return 'caught_up' if $page->{next_cursor} eq $cp->{resume_cursor};
    return 'caught_up' if $BUG eq 'falsy_token' && !$page->{next_cursor};     # "no next cursor: nothing to publish"
    my $b = rpc({op => 'barrier', cursor => $cp->{resume_cursor}, version => $cp->{checkpoint_version},
                 next_cursor => $page->{next_cursor}, next_version => $cp->{checkpoint_version} + 1,
                 applied_position => $prefix});
    return 'lost' if $b->{type} eq 'lost';
    return $b->{value} ? 'advanced' : 'rejected';
}

while (1) {
    my $s = attempt();
    rpc({op => 'wait', reason => $s}) if $s eq 'caught_up' || $s eq 'blocked';
}
