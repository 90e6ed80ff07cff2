<?php
/**
 * includes/bots.php against its source, internal/enrich/bots/ai_bots.json.
 *
 * @package StrataAnalytics
 */

use PHPUnit\Framework\TestCase;

final class GeneratorTest extends TestCase {

	/** The committed table is exactly what the generator makes of the JSON. */
	public function test_generated_table_is_current() {
		$json = file_get_contents( dirname( __DIR__, 4 ) . '/internal/enrich/bots/ai_bots.json' );
		$this->assertNotFalse( $json );
		$this->assertSame(
			strata_analytics_render_bots( $json ),
			file_get_contents( dirname( __DIR__, 2 ) . '/includes/bots.php' ),
			'includes/bots.php differs from internal/enrich/bots/ai_bots.json: run `make wordpress-bots`'
		);
	}

	/** Every token of the JSON is in the table, with its name and category. */
	public function test_every_bot_is_in_the_table() {
		$file = json_decode( file_get_contents( dirname( __DIR__, 4 ) . '/internal/enrich/bots/ai_bots.json' ), true );
		$all  = Strata_Analytics_Bots::all();
		$this->assertCount( count( $file['bots'] ), $all );
		foreach ( $file['bots'] as $bot ) {
			$this->assertSame( array( $bot['name'], $bot['category'] ), $all[ strtolower( $bot['token'] ) ] );
		}
	}

	/**
	 * The generator refuses what the Go classifier's New refuses
	 * (TestNewValidates), and tokens that are not printable ASCII.
	 *
	 * @dataProvider invalid_lists
	 */
	public function test_refuses_invalid_lists( $json ) {
		$this->expectException( InvalidArgumentException::class );
		strata_analytics_render_bots( $json );
	}

	public function invalid_lists() {
		return array(
			'not json'       => array( '{' ),
			'empty'          => array( '{"version":1,"bots":[]}' ),
			'no token'       => array( '{"bots":[{"name":"x","category":"ai_crawler"}]}' ),
			'bad category'   => array( '{"bots":[{"token":"x","name":"x","category":"search"}]}' ),
			'duplicate'      => array( '{"bots":[{"token":"X","name":"x","category":"ai_crawler"},{"token":"x","name":"y","category":"ai_crawler"}]}' ),
			'space in token' => array( '{"bots":[{"token":"Kangaroo Bot","name":"x","category":"ai_crawler"}]}' ),
			'slash in token' => array( '{"bots":[{"token":"a/b","name":"x","category":"ai_crawler"}]}' ),
			'non-ASCII'      => array( '{"bots":[{"token":"Bøt","name":"x","category":"ai_crawler"}]}' ),
		);
	}

	/** Names are written as PHP strings, quotes and backslashes escaped. */
	public function test_quotes_names() {
		$php = strata_analytics_render_bots( '{"version":1,"bots":[{"token":"Q","name":"it\'s \\\\ x","category":"ai_crawler"}]}' );
		$this->assertStringContainsString( "'q' => array( 'it\\'s \\\\ x', 'ai_crawler' )", $php );
	}
}
