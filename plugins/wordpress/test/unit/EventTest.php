<?php
/**
 * The bot page view's payload and request.
 *
 * @package StrataAnalytics
 */

use PHPUnit\Framework\TestCase;

final class EventTest extends TestCase {

	const UA   = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
	const UUID = '6f1c4a52-3b0e-4d7a-9c1e-2f3a4b5c6d7e';

	/**
	 * A $pageview with the bot's user agent: ingest refuses $bot_pageview
	 * from clients and makes it from this.
	 */
	public function test_bot_pageview() {
		$this->assertSame(
			array(
				'uuid'        => self::UUID,
				'event_name'  => '$pageview',
				'distinct_id' => '$server_bot',
				'user_agent'  => self::UA,
				'url'         => 'https://blog.example.com/hello/?p=1',
				'referrer'    => 'https://chatgpt.com/',
				'properties'  => array( '$server_captured' => 'true' ),
			),
			Strata_Analytics_Event::bot_pageview( self::UA, 'https://blog.example.com/hello/?p=1', 'https://chatgpt.com/', self::UUID )
		);
	}

	/** Fields ingest would refuse are left out, never the whole event. */
	public function test_drops_fields_ingest_refuses() {
		$event = Strata_Analytics_Event::bot_pageview( self::UA, "https://blog.example.com/\xff", '', self::UUID );
		$this->assertArrayNotHasKey( 'url', $event );
		$this->assertArrayNotHasKey( 'referrer', $event );

		$event = Strata_Analytics_Event::bot_pageview( self::UA, 'https://blog.example.com/' . str_repeat( 'a', 8192 ), "https://x.example/\x00", self::UUID );
		$this->assertArrayNotHasKey( 'url', $event );
		$this->assertArrayNotHasKey( 'referrer', $event );

		// 8,192 characters, many more bytes: kept.
		$long  = 'https://blog.example.com/' . str_repeat( 'é', 8192 - 25 );
		$event = Strata_Analytics_Event::bot_pageview( self::UA, $long, null, self::UUID );
		$this->assertSame( $long, $event['url'] );
	}

	/** The body is the ingest envelope with one event, as docs/ingest.md has it. */
	public function test_body() {
		$event = Strata_Analytics_Event::bot_pageview( self::UA, 'https://blog.example.com/a/b', '', self::UUID );
		$body  = Strata_Analytics_Event::body( $event );
		$this->assertSame( array( 'batch' => array( $event ) ), json_decode( $body, true ) );
		$this->assertStringContainsString( '"url":"https://blog.example.com/a/b"', $body );
		$this->assertStringContainsString( '"properties":{"$server_captured":"true"}', $body );
		$this->assertStringNotContainsString( '$bot_pageview', $body );
		$this->assertStringNotContainsString( 'api_key', $body, 'the key travels in X-API-Key' );
	}

	/** Properties stay an object when encoded, never a list. */
	public function test_properties_encode_as_an_object() {
		$body = json_decode( Strata_Analytics_Event::body( Strata_Analytics_Event::bot_pageview( self::UA, '', '', self::UUID ) ) );
		$this->assertIsObject( $body->batch[0]->properties );
	}

	/** The request never waits for Strata: not blocking, one-second timeout. */
	public function test_request_args() {
		$event = Strata_Analytics_Event::bot_pageview( self::UA, 'https://blog.example.com/', '', self::UUID );
		$args  = Strata_Analytics_Event::request_args( WP_Stubs::KEY, $event );
		$this->assertFalse( $args['blocking'] );
		$this->assertSame( 1, $args['timeout'] );
		$this->assertSame( WP_Stubs::KEY, $args['headers']['X-API-Key'] );
		$this->assertSame( 'application/json', $args['headers']['Content-Type'] );
		$this->assertSame( Strata_Analytics_Event::body( $event ), $args['body'] );
		$this->assertSame( 'strata-analytics-wordpress/0.3.1', $args['user-agent'] );
	}
}
