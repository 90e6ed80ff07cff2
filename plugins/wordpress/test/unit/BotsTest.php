<?php
/**
 * The PHP classifier against the server's own test table and the Go
 * classifier's edge cases.
 *
 * @package StrataAnalytics
 */

use PHPUnit\Framework\TestCase;

final class BotsTest extends TestCase {

	/** The Go tests' table: expected bot name (or -), tab, user agent. */
	const TABLE = '/internal/enrich/bots/testdata/user_agents.tsv';

	/**
	 * Every row of internal/enrich/bots/testdata/user_agents.tsv, as
	 * TestClassifyTable runs it, and every allowlist entry covered.
	 */
	public function test_server_table() {
		$lines = file( dirname( __DIR__, 4 ) . self::TABLE, FILE_IGNORE_NEW_LINES );
		$this->assertNotFalse( $lines );
		$rows    = 0;
		$covered = array();
		foreach ( $lines as $line ) {
			if ( '' === $line || '#' === $line[0] ) {
				continue;
			}
			$parts = explode( "\t", $line, 2 );
			$this->assertCount( 2, $parts, "malformed row $line" );
			list( $want, $ua ) = $parts;
			++$rows;
			$bot = Strata_Analytics_Bots::classify( $ua );
			$this->assertSame( '-' === $want ? null : $want, $bot ? $bot['name'] : null, "user agent \"$ua\"" );
			if ( $bot ) {
				$covered[ $bot['name'] ] = true;
			}
		}
		$this->assertGreaterThanOrEqual( 60, $rows );
		foreach ( Strata_Analytics_Bots::all() as $row ) {
			$this->assertArrayHasKey( $row[0], $covered, "allowlist entry {$row[0]} has no user agent in testdata" );
		}
	}

	/**
	 * Cases whose answers were taken from the Go classifier: separators,
	 * case, versions, and the bytes that are not separators.
	 *
	 * @dataProvider edge_cases
	 */
	public function test_matches_go( $ua, $want ) {
		$bot = Strata_Analytics_Bots::classify( $ua );
		$this->assertSame( $want, $bot ? $bot['name'] : null );
	}

	public function edge_cases() {
		return array(
			'bare token'                   => array( 'GPTBot', 'GPTBot' ),
			'lower case'                   => array( 'gptbot', 'GPTBot' ),
			'upper case with version'      => array( 'GPTBOT/1.0', 'GPTBot' ),
			'tabs'                         => array( "\tGPTBot\t", 'GPTBot' ),
			'commas'                       => array( 'a,GPTBot,b', 'GPTBot' ),
			'parentheses'                  => array( '(GPTBot)', 'GPTBot' ),
			'semicolon after'              => array( 'GPTBot;', 'GPTBot' ),
			'no space after semicolon'     => array( 'Mozilla/5.0 (compatible;ClaudeBot/1.0)', 'ClaudeBot' ),
			'empty version'                => array( 'GPTBot/', 'GPTBot' ),
			'two slashes'                  => array( 'GPTBot//x', 'GPTBot' ),
			'newline is no separator'      => array( "foo\nGPTBot/1.0", null ),
			'carriage return is none'      => array( "foo\rGPTBot", null ),
			'no-break space is none'       => array( "x\u{00a0}GPTBot", null ),
			'token after a slash'          => array( 'x/GPTBot', null ),
			'leading slash'                => array( '/GPTBot', null ),
			'hyphenated lookalike'         => array( 'GPT-Bot', null ),
			'trailing hyphen'              => array( 'Gptbot-', null ),
			'plus prefix'                  => array( '+GPTBot', null ),
			'prefix'                       => array( 'NotGPTBot/1.0', null ),
			'suffix'                       => array( 'GPTBotany/2.0', null ),
			'non-ASCII letter inside'      => array( 'GPTBöt/1.0', null ),
			'fullwidth letters'            => array( 'ＧＰＴＢｏｔ', null ),
			'Kelvin sign is not K'         => array( "\u{212a}ClaudeBot", null ),
			'non-ASCII elsewhere'          => array( 'Mozilla/5.0 (GPTBot/1.0; ü)', 'GPTBot' ),
			'invalid UTF-8 before token'   => array( "\xffGPTBot", null ),
			'invalid byte, then a space'   => array( "\xe2 GPTBot", 'GPTBot' ),
			'NUL after'                    => array( "GPTBot\x00", null ),
			'NUL before'                   => array( "\x00GPTBot", null ),
			'shortest token'               => array( 'CCBOT', 'CCBot' ),
			'a token that prefixes another' => array( 'omgili/0.5', 'omgili' ),
			'the longer one'               => array( 'OMGILIBOT/x', 'omgilibot' ),
			'longest token'                => array( 'cohere-training-data-crawler', 'cohere-training-data-crawler' ),
			'names differ from case'       => array( 'AI2Bot-Dolma', 'Ai2Bot-Dolma' ),
			'first product wins'           => array( 'ClaudeBot GPTBot', 'ClaudeBot' ),
		);
	}

	/**
	 * Input no real bot sends is no bot, and raises no warning (PHPUnit
	 * here fails on any notice or warning).
	 *
	 * @dataProvider bad_input
	 */
	public function test_bad_input_is_no_bot( $ua ) {
		$this->assertNull( Strata_Analytics_Bots::classify( $ua ) );
		$this->assertNull( Strata_Analytics_Bots::forwardable( $ua ) );
	}

	public function bad_input() {
		return array(
			'empty'             => array( '' ),
			'null'              => array( null ),
			'false'             => array( false ),
			'a number'          => array( 42 ),
			'an array'          => array( array( 'GPTBot' ) ),
			'separators only'   => array( " \t;(),,;" ),
			'slashes only'      => array( '////' ),
			'a megabyte'        => array( str_repeat( 'a', 1 << 20 ) ),
			'a megabyte, split' => array( str_repeat( 'ab ', 350000 ) ),
			'non-ASCII only'    => array( 'Мозилла/5.0 (機器人; 🤖)' ),
			'invalid UTF-8'     => array( "\xff\xfe\xfd" ),
			'a 65-byte product' => array( str_repeat( 'x', 65 ) . '/1.0' ),
		);
	}

	/** A bot is forwarded only with a user agent ingest accepts as it is. */
	public function test_forwardable_is_what_ingest_takes() {
		$this->assertSame( 'GPTBot', Strata_Analytics_Bots::forwardable( 'Mozilla/5.0 (compatible; GPTBot/1.2)' )['name'] );
		$this->assertSame( 'GPTBot', Strata_Analytics_Bots::forwardable( 'GPTBot/1.0 (ü)' )['name'] );

		// 2,048 characters are taken, counted as characters, not bytes.
		$at_limit = 'GPTBot ' . str_repeat( 'é', 2048 - 7 );
		$this->assertSame( 'GPTBot', Strata_Analytics_Bots::forwardable( $at_limit )['name'] );
		$this->assertNull( Strata_Analytics_Bots::forwardable( $at_limit . 'x' ) );
		$this->assertSame( 'GPTBot', Strata_Analytics_Bots::classify( $at_limit . 'x' )['name'] );

		// Ingest refuses invalid UTF-8 and NUL in an event's user_agent.
		$this->assertSame( 'GPTBot', Strata_Analytics_Bots::classify( "\xe2 GPTBot" )['name'] );
		$this->assertNull( Strata_Analytics_Bots::forwardable( "\xe2 GPTBot" ) );
		$this->assertNull( Strata_Analytics_Bots::forwardable( "GPTBot \x00" ) );
	}

	/** The category comes along with the name. */
	public function test_categories() {
		$this->assertSame( array( 'name' => 'ChatGPT-User', 'category' => 'ai_assistant' ), Strata_Analytics_Bots::classify( 'ChatGPT-User/1.0' ) );
		$this->assertSame( array( 'name' => 'GPTBot', 'category' => 'ai_crawler' ), Strata_Analytics_Bots::classify( 'GPTBot/1.0' ) );
	}

	/** The generic search crawlers stay off the list, as in TestAllowlist. */
	public function test_no_generic_search_crawlers() {
		$this->assertGreaterThanOrEqual( 40, count( Strata_Analytics_Bots::all() ) );
		foreach ( array( 'googlebot', 'bingbot', 'applebot', 'duckduckbot', 'yandexbot', 'baiduspider', 'petalbot' ) as $generic ) {
			$this->assertArrayNotHasKey( $generic, Strata_Analytics_Bots::all() );
		}
	}
}
